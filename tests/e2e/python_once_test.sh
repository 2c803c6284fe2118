#!/usr/bin/env bash
# One clean `bazel build //:wheels` with default flags: per-Python wheels for
# every interpreter found, the pjrt wheel once, and (from the execution log)
# every Python-independent action ran exactly once.
set -euo pipefail
cd "$(dirname "$0")/../.."
# The workspace's own output base: its external repositories (the
# cargo-built tool) and server are shared with `make bazel-test`.
bz() { bazel "$@"; }
OB="$(bazel info output_base 2>/dev/null)"
FLAGS=(--config=offline --disk_cache= --remote_cache=)
PY=.venv/bin/python
[[ -x $PY ]] || { echo "FAIL: $PY missing; run \`make setup\` first" >&2; exit 1; }

bz build "${FLAGS[@]}" @rocm_python//:all >/dev/null 2>&1 || bz build "${FLAGS[@]}" @rocm_python//:all
mapfile -t versions < <("$PY" -c '
import ast, sys
for line in open(sys.argv[1]):
    if line.startswith("PYTHON_VERSIONS ="):
        print("\n".join(ast.literal_eval(line.split("=", 1)[1].strip())))
' "$OB/external/rocm_python/versions.bzl")
((${#versions[@]})) || { echo "FAIL: no Python versions discovered" >&2; exit 1; }
echo "versions found: ${versions[*]}"

log="$OB/python_once.exec.json"
bz clean
bz build "${FLAGS[@]}" //:wheels --execution_log_json_file="$log"
"$PY" tests/python/exec_log_once.py "$log" "${versions[@]}"

# The wheels themselves: one per version per per-Python distribution, one pjrt.
# After `bazel clean` every wheel under bazel-out is from this build.
out="$(bz info "${FLAGS[@]}" output_path 2>/dev/null)"
mapfile -t wheels < <(find "$out" -name '*.whl' | sort)
for dist in example_jaxlib jax_rocm7_plugin; do
  for v in "${versions[@]}"; do
    tag="cp${v/./}-cp${v/./}-manylinux_2_28_x86_64"
    n=$(printf '%s\n' "${wheels[@]}" | grep -c "/${dist}-[^/]*-${tag}\.whl$" || true)
    [[ $n == 1 ]] || { echo "FAIL: $n ${dist} wheels tagged $tag in ${wheels[*]}" >&2; exit 1; }
  done
done
n=$(printf '%s\n' "${wheels[@]}" | grep -c '/jax_rocm7_pjrt-[^/]*\.whl$' || true)
[[ $n == 1 ]] || { echo "FAIL: $n jax_rocm7_pjrt wheels in ${wheels[*]}" >&2; exit 1; }
echo "ok: ${#wheels[@]} wheels"

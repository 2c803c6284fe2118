#!/usr/bin/env bash
# One clean `bazel build //:wheels` with default flags: per-Python wheels for
# every interpreter on this machine (the declared versions, each a rules_python
# local runtime), the pjrt wheel once, and (from the execution log) every
# Python-independent action ran exactly once.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib/common.sh
# The workspace's own output base: its external repositories (the
# cargo-built tool) and server are shared with `make bazel-test`.
OB="$(bazel info output_base 2>/dev/null)"
FLAGS=(--disk_cache= --remote_cache=)
PY=.venv/bin/python
[[ -x $PY ]] || fail "$PY missing; run \`make setup\` first"

# What the machine has, listed independently of the declared versions and
# the local-runtime registration; the matrix users need (3.11-3.14) must be
# among it.
source tests/lib/pythons.sh
mapfile -t versions < <(expected_python_versions)
echo "versions on this machine: ${versions[*]}"
for v in 3.11 3.12 3.13 3.14; do
  [[ " ${versions[*]} " == *" $v "* ]] || fail "no Python $v with headers on this machine (make setup)"
done

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
    tag="cp${v/./}-cp${v/./}-manylinux_2_[0-9]+_x86_64"
    n=$(printf '%s\n' "${wheels[@]}" | grep -cE "/${dist}-[^/]*-${tag}\.whl$" || true)
    [[ $n == 1 ]] || fail "$n ${dist} wheels tagged $tag in ${wheels[*]}"
  done
done
n=$(printf '%s\n' "${wheels[@]}" | grep -c '/jax_rocm7_pjrt-[^/]*\.whl$' || true)
[[ $n == 1 ]] || fail "$n jax_rocm7_pjrt wheels in ${wheels[*]}"
echo "ok: ${#wheels[@]} wheels"

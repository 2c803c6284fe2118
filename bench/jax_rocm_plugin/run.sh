#!/usr/bin/env bash
# Cold `bazel build //examples/jax_rocm_plugin:wheels` (Python 3.11-3.14 in
# one invocation) from a fresh --output_base with no disk or remote cache,
# then: its parts (parts.py: abseil, nanobind, HIP device compiles,
# per-Python work) and the execution-log check that Python-independent work
# (abseil, the HIP kernels and their device compiles) ran once for all four
# versions (tests/python/exec_log_once.py).
#
#   scripts/buildroot bash bench/jax_rocm_plugin/run.sh
#   [BENCH_BAZEL_FLAGS="--//:gfx=gfx1201"] [BENCH_JOBS=2]
#
# Repository fetches (abseil's, nanobind's, Eigen's and NumPy's archives)
# come from the shared repository cache when present; the profile reports
# their time apart. Results: bench/out/jax_rocm_plugin/ (exec.json,
# profile.json, parts.json); the numbers are in docs/porting.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
read -r -a extra <<<"${BENCH_BAZEL_FLAGS:-}"
out=bench/out/jax_rocm_plugin
mkdir -p "$out"
ob=$(mktemp -d "${TMPDIR:-/tmp}/jax_rocm_plugin_ob.XXXXXX")
cleanup() {
  bazel --output_base="$ob" shutdown >/dev/null 2>&1 || true
  chmod -R u+w "$ob" 2>/dev/null || true
  rm -rf "$ob"
}
trap cleanup EXIT
start=$(date +%s.%N)
bazel --output_base="$ob" build --disk_cache= --remote_cache= --jobs="${BENCH_JOBS:-2}" \
  --noexperimental_merged_skyframe_analysis_execution \
  --execution_log_json_file="$PWD/$out/exec.json" --profile="$PWD/$out/profile.json" \
  "${extra[@]}" //examples/jax_rocm_plugin:wheels
end=$(date +%s.%N)
echo "cold build: $(python3 -c "print(round($end - $start, 1))") s wall (client)"
python3 bench/jax_rocm_plugin/parts.py "$out/exec.json" "$out/profile.json" | tee "$out/parts.txt"
python3 tests/python/exec_log_once.py --needles=.hipfb,/external/abseil-cpp,libhip_linalg_kernels_impl \
  --mnemonics=HipDeviceCompile,CppCompile,CppArchive "$out/exec.json" 3.11 3.12 3.13 3.14

#!/usr/bin/env bash
# The real jax-rocm7-plugin's cold build, against two anchors in the same run:
#   1. cold `bazel build //examples/jax_rocm_plugin:wheels` (Python 3.11-3.14
#      in one invocation) from a fresh --output_base with no disk or remote
#      cache: its parts (parts.py: abseil, nanobind, HIP device compiles,
#      per-Python work) and the execution-log check that Python-independent
#      work (abseil, the HIP kernels and their device compiles) ran once for
#      all four versions (tests/lib/exec_log_once.py);
#   2. anchor: the same build for one Python version (3.12), cold, in another
#      fresh output base;
#   3. anchor: upstream's way for the HIP sources, one clang action per
#      source for every target (monolithic.py), in the first build's
#      execution root.
#
#   scripts/buildroot bash bench/jax_rocm_plugin/run.sh
#   [BENCH_BAZEL_FLAGS="--//:gfx=gfx1201"] [BENCH_JOBS=2]
#
# Repository fetches (abseil's, nanobind's, Eigen's and NumPy's archives)
# come from the shared repository cache when present; the profile reports
# their time apart. Results: bench/out/jax_rocm_plugin/ (exec.json,
# profile.json, parts.txt, one.txt, monolithic.txt); the numbers are in
# docs/porting.md and docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
read -r -a extra <<<"${BENCH_BAZEL_FLAGS:-}"
out=bench/out/jax_rocm_plugin
mkdir -p "$out"
source bench/lib/output_bases.sh
scratch_work jax_rocm_plugin
ob=$(output_base all)
ob1=$(output_base one)
# cold OB LOG [FLAGS...]: a cold build of the plugin's wheels; prints its wall time (s).
cold() {
  local base=$1 log=$2 start end
  shift 2
  start=$(date +%s.%N)
  bazel --output_base="$base" build --disk_cache= --remote_cache= --jobs="${BENCH_JOBS:-2}" \
    --noexperimental_merged_skyframe_analysis_execution --execution_log_json_file="$PWD/$log" \
    "$@" "${extra[@]}" //examples/jax_rocm_plugin:wheels >&2
  end=$(date +%s.%N)
  python3 -c "print(round($end - $start, 1))"
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
wall=$(cold "$ob" "$out/exec.json" --profile="$PWD/$out/profile.json")
echo "cold build, 3.11-3.14: $wall s wall (client)"
wall1=$(cold "$ob1" "$out/exec1.json" --//:python_versions=3.12)
echo "cold build, 3.12 only: $wall1 s wall (client)"
bazel --output_base="$ob1" shutdown >/dev/null 2>&1 || true
python3 - "$out/exec.json" "$out/exec1.json" "$wall" "$wall1" <<'PY' | tee "$out/one.txt"
import sys
sys.path.insert(0, "tests/lib")
from exec_log import read_spawns, spawn_seconds
def spawns(log):
    s = read_spawns(log)
    return len(s), sum(spawn_seconds(x) for x in s)
(n4, t4), (n1, t1) = spawns(sys.argv[1]), spawns(sys.argv[2])
w4, w1 = float(sys.argv[3]), float(sys.argv[4])
print(f"| 3.11-3.14 in one invocation | {w4} s | {n4} spawns | {t4:.0f} s |")
print(f"| 3.12 alone (anchor) | {w1} s | {n1} spawns | {t1:.0f} s |")
print(f"| ratio | **{w4 / w1:.2f}x** | {n4 / n1:.2f}x | {t4 / t1:.2f}x |")
PY
python3 bench/jax_rocm_plugin/monolithic.py "$out/exec.json" "$(bazel --output_base="$ob" info execution_root 2>/dev/null)" \
  "${BENCH_JOBS:-2}" | tee "$out/monolithic.txt"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 bench/jax_rocm_plugin/parts.py "$out/exec.json" "$out/profile.json" | tee "$out/parts.txt"
python3 tests/lib/exec_log_once.py --needles=.hipfb,/external/abseil-cpp,libhip_linalg_kernels_impl \
  --mnemonics=HipDeviceCompile,CppCompile,CppArchive "$out/exec.json" 3.11 3.12 3.13 3.14

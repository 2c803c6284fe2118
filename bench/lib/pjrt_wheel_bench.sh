# Sourced by the benchmarks on the real jax-rocm7-pjrt 0.10.2 wheel
# (bench/thin, bench/repair) with the caller's arguments, after it set
# BENCH (its name): checks the anchor's tools, fetches the wheel once
# (sha256-checked, tests/lib/pypi_wheel.sh) and builds rocm-wheel. Sets
# runs (first argument, default 3), repo, venv, whl (the wheel's file name),
# fat (its cached path), tool (rocm-wheel), out (bench/out/$BENCH, emptied)
# and results (the measurer's table); defines measure (bench/lib/measure.sh).
set -euo pipefail
runs=${1:-3}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
venv=${ROCM_WHEEL_VENV:-$repo/.venv}
for t in unzip zip; do command -v $t >/dev/null || { echo "$t missing" >&2; exit 1; }; done
cd "$repo"
source tests/lib/common.sh
source tests/lib/pypi_wheel.sh
VENV=$venv
whl=$PJRT_WHEEL
fat=$(cached_pjrt_wheel)
source tests/lib/rocm_wheel.sh
tool=$(rocm_wheel_path)
out=$repo/bench/out/$BENCH
rm -rf "$out"
mkdir -p "$out"
results=$out/results.tsv
: >"$results"
source bench/lib/measure.sh

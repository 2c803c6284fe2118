#!/usr/bin/env bash
# The real plugin's shape at scale: N HIP translation units x T GPU targets,
# the per-target split (hip_library) against the monolithic baseline (one
# hipcc action per TU with every --offload-arch) in the same run.
#
#   scripts/buildroot bash bench/scale/run.sh [--analysis-only] [N ...]
#   [BENCH_SCALE_SETS="2 8 26"] [BENCH_SCALE_DESIGNS="mono split"]
#
# Default N: 4 16 43 (the shipped jax-rocm7-pjrt 0.10.2 has 43 bundles).
# Target sets (SETS below): 2, 8 and 26 targets; BENCH_SCALE_SETS picks some
# by their size (the full 43 x 26 row alone takes two hours on 2 cores).
# Each cold build runs on a fresh Bazel server after nonce.h changed, so
# every HIP action and what links them runs again while the external
# repositories and the rocm-wheel tool stay built. Per row: analysis
# phase time and configured targets, actions, server peak RSS and heap after
# GC, cold wall time, Bazel's critical path, and the cluster projection
# (bench/scale/critical_path.py: longest path of the action graph with each
# action at its measured time). --analysis-only skips execution (minutes
# instead of hours) for the growth rows; its wall column is then the
# --nobuild invocation on a fresh server (start, loading and analysis).
# Prints a Markdown table (results go to bench/scale/README.md) and keeps
# each row's build output, profile and execution log in bench/out/scale/.
set -euo pipefail
cd "$(dirname "$0")/../.."
BAZEL=${BAZEL:-bazel}
checkout=$PWD
analysis_only=0
[[ ${1:-} == --analysis-only ]] && { analysis_only=1; shift; }
sizes=("$@")
((${#sizes[@]})) || sizes=(4 16 43)
# name|flag value. The ~8 set is the issue's mix with gfx90a in place of
# gfx950, which rocPRIM 6.4 refuses (no 128-bit atomics); the 26 set is every
# target clang 21 and rocPRIM 6.4 build.
SETS=(
  "2|gfx120X-all"
  "8|gfx90a-dcgpu,gfx94X-dcgpu,gfx110X-all,gfx120X-all"
  "26|dgpu-all,igpu-all,gfx908-dcgpu,gfx90a-dcgpu,gfx94X-dcgpu"
)
work=${BENCH_SCALE_DIR:-$HOME/.cache/rules_rocm/bench-scale}
mkdir -p "$work"
log=$(mktemp -d "${TMPDIR:-/tmp}/bench_scale.XXXXXX")
# Per row: build output, profile, execution log and critical path.
keep=$checkout/bench/out/scale
mkdir -p "$keep"
trap 'rm -rf "$log"' EXIT

now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(now)"; }

measure() { # N SETNAME GFX DESIGN
  local n=$1 set=$2 gfx=$3 design=$4 ws=$work/ws$1 ob=$work/ob$1
  local flags=("--@rules_rocm//:gfx=$gfx") t wall
  rm -f "$log/exec.json"
  echo "#define SCALE_NONCE \"$(date +%s%N) $RANDOM\"" >"$ws/nonce.h"
  (cd "$ws" && "$BAZEL" --output_base="$ob" shutdown)
  t=$(now)
  if ((analysis_only)); then
    (cd "$ws" && "$BAZEL" --output_base="$ob" build --nobuild "${flags[@]}" --profile="$log/p.json" "//:wheel_$design") 2>"$log/build.log" \
      || { cat "$log/build.log" >&2; exit 1; }
  else
    (cd "$ws" && "$BAZEL" --output_base="$ob" build "${flags[@]}" --profile="$log/p.json" \
      --execution_log_json_file="$log/exec.json" "//:wheel_$design") 2>"$log/build.log" \
      || { cat "$log/build.log" >&2; exit 1; }
  fi
  wall=$(since "$t")
  # Kept for later analysis (the execution log is what the projection reads).
  cp "$log/build.log" "$keep/$n-$set-$design.build.log"
  cp "$log/p.json" "$keep/$n-$set-$design.profile.json"
  [[ ! -f $log/exec.json ]] || gzip -c "$log/exec.json" >"$keep/$n-$set-$design.exec.json.gz"
  local pid rss heap configured analysis actions crit proj dep_configs
  # How many configurations the TUs' one header-only dependency is analysed
  # in (one, whatever the number of targets).
  dep_configs=$(cd "$ws" && "$BAZEL" --output_base="$ob" cquery "${flags[@]}" "deps(//:wheel_$design)" 2>/dev/null \
    | grep -c '^//:scale_common ' || true)
  [[ $design == split ]] || dep_configs=-
  pid=$(cd "$ws" && "$BAZEL" --output_base="$ob" info server_pid 2>/dev/null)
  rss=$(awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$pid/status")
  heap=$(cd "$ws" && "$BAZEL" --output_base="$ob" info used-heap-size-after-gc 2>/dev/null)
  configured=$(sed -n 's/.*, \([0-9]*\) targets configured).*/\1/p' "$log/build.log" | tail -1)
  actions=$(cd "$ws" && "$BAZEL" --output_base="$ob" aquery "${flags[@]}" --output=summary "deps(//:wheel_$design)" 2>/dev/null \
    | sed -n 's/^\([0-9]*\) total action.*/\1/p')
  # Bazel 7 interleaves analysis with execution, so a full build's profile
  # has no analysis phase of its own: --analysis-only measures it.
  analysis=- crit=- proj=-
  if ((analysis_only)); then
    analysis=$(cd "$ws" && "$BAZEL" --output_base="$ob" analyze-profile "$log/p.json" 2>/dev/null \
      | sed -n 's/^Total \(interleaved loading-and-\)\?analysis phase time *\([0-9.]*\) *\(m\?s\).*/\2 \3/p' \
      | awk '{print ($2 == "ms") ? $1 / 1000 : $1}')
  else
    crit=$(sed -n 's/.*Critical Path: \([0-9.]*\)s.*/\1/p' "$log/build.log" | tail -1)
    python3 bench/scale/critical_path.py "$log/exec.json" >"$keep/$n-$set-$design.path.json"
    proj=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print("%s of %s" % (d["critical_path_s"], d["total_action_s"]))' \
      "$keep/$n-$set-$design.path.json")
  fi
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
    "$n" "$set" "$design" "${analysis:-?}" "${configured:-?}" "$dep_configs" "${actions:-?}" "$rss" "$heap" \
    "$wall" "$crit" "$proj"
}

echo "| TUs | targets | design | analysis s | configured targets | configurations of the shared dep | actions | server peak RSS MiB | heap after GC | cold wall s | critical path s | cluster projection s (critical path of total action time) |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for n in "${sizes[@]}"; do
  # Rewritten every run (unchanged files keep their digests), so an older
  # workspace follows the generator.
  python3 bench/scale/gen.py --tus "$n" --rules-rocm "$checkout" "$work/ws$n"
  # External repositories and the tool, built once per output base (the
  # tool's actions shared between output bases through a disk cache that the
  # measured builds do not use); analysis alone needs only the fetch. Every
  # output is downloaded: with Bazel 7's default (toplevel) the tool's
  # intermediate outputs would stay in the disk cache only, and the first
  # measured build, without it, would compile the tool again.
  warm=(--disk_cache="$work/tool_cache" --remote_download_outputs=all)
  ((analysis_only)) && warm=(--nobuild)
  (cd "$work/ws$n" && "$BAZEL" --output_base="$work/ob$n" build "${warm[@]}" //:warmup) 2>"$log/warm.log" ||
    { cat "$log/warm.log" >&2; exit 1; }
  for entry in "${SETS[@]}"; do
    set=${entry%%|*} gfx=${entry#*|}
    [[ " ${BENCH_SCALE_SETS:-2 8 26} " == *" $set "* ]] || continue
    for design in ${BENCH_SCALE_DESIGNS:-mono split}; do
      measure "$n" "$set" "$gfx" "$design"
    done
  done
  (cd "$work/ws$n" && "$BAZEL" --output_base="$work/ob$n" shutdown)
done
echo
echo "Machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the end, $(date -u +%Y-%m-%dT%H:%MZ)."

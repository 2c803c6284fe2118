#!/usr/bin/env bash
# Python versions in one invocation vs one invocation per version (today's
# way: one CI job per HERMETIC_PYTHON_VERSION), same machine, same run.
# Run it inside the build root: scripts/buildroot bench/python_versions/run.sh
#
#   [BENCH_REPEAT=3] [BENCH_BAZEL_FLAGS=--//:gfx=gfx90a-dcgpu] \
#   bench/python_versions/run.sh [VERSIONS...]   (default: every version found)
#
# Each measured build starts from `bazel clean` and a fresh server (the
# workspace's output base, or BENCH_OUTPUT_BASE); external repositories
# (rules_python's, @rocm_python, @rocm_hip, the crates) are fetched once beforehand and kept,
# since both ways pay them identically. So is the rocm-wheel tool, which
# rules_rust compiles as actions that `bazel clean` removes: it is built once
# into a disk cache that holds nothing else (bench/out/python_versions/tool_cache),
# and each measured build reads a fresh hard-linked copy of that cache, so the
# tool's compiles are cache hits (not counted as actions) and every other
# action runs. No other cache. Extra bazel flags (e.g. --//:gfx=...) come
# from BENCH_BAZEL_FLAGS.
# Writes bench/out/python_versions.json (and the execution logs under
# bench/out/python_versions/) and prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ -n ${BENCH_OUTPUT_BASE:-} ]]; then
  bz() { bazel --output_base="$BENCH_OUTPUT_BASE" "$@"; }
else
  bz() { bazel "$@"; }
fi
read -r -a extra <<<"${BENCH_BAZEL_FLAGS:-}"
FLAGS=(--disk_cache= --remote_cache= "${extra[@]}")
PY=.venv/bin/python
[[ -x $PY ]] || { echo "run \`make setup\` first ($PY missing)" >&2; exit 1; }
mkdir -p bench/out
# Execution logs are kept for inspection.
logs=bench/out/python_versions
mkdir -p "$logs"

bz build "${FLAGS[@]}" --nobuild //:wheels >/dev/null 2>&1 || bz build "${FLAGS[@]}" --nobuild //:wheels
# The tool, from a clean output base so that its actions run and land in the
# tool-only disk cache (cache hits if it already holds them). The pure-Python
# example wheel built on its own needs the tool in the configuration //:wheels
# uses (rules_rocm's flags reset); its own packing action is in another
# configuration than under //:wheels, so no measured build hits it. (The
# toolchain target //rules:rocm_wheel has no outputs: building it builds nothing.)
tool_cache=$PWD/$logs/tool_cache
bz clean >/dev/null 2>&1
bz build "${FLAGS[@]}" --disk_cache="$tool_cache" --remote_download_outputs=all //examples/hello_plugin:wheel >"$logs/tool.out" 2>&1 ||
  { cat "$logs/tool.out" >&2; exit 1; }
if (($#)); then
  versions=("$@")
else
  # The declared versions (what --//:python_versions=all builds), from
  # @rocm_python's versions.bzl, found through Bazel's view of the repository.
  bz build --nobuild //:python_versions >/dev/null 2>&1
  mapfile -t versions < <(sed -n 's/^PYTHON_VERSIONS = \[\(.*\)\]$/\1/p' "$(bz info output_base 2>/dev/null)"/external/*rocm_python/versions.bzl |
    tr -d '" ' | tr ',' '\n' | sort -u -V)
  ((${#versions[@]})) || { echo "found no Python versions in @rocm_python" >&2; exit 1; }
fi
echo "versions: ${versions[*]}" >&2
load0=$(cut -d' ' -f1-3 /proc/loadavg)

# measure NAME FLAGS...: clean build of //:wheels; prints "seconds actions-json".
measure() {
  local name=$1
  shift
  bz clean >/dev/null 2>&1
  bz shutdown >/dev/null 2>&1
  local t0 t1
  rm -rf "$logs/cache"
  cp -al "$tool_cache" "$logs/cache"
  t0=$(date +%s.%N)
  bz build "${FLAGS[@]}" --disk_cache="$PWD/$logs/cache" //:wheels "$@" --execution_log_json_file="$logs/$name.json" >"$logs/$name.out" 2>&1 ||
    { cat "$logs/$name.out" >&2; exit 1; }
  t1=$(date +%s.%N)
  echo "$("$PY" -c "print(round($t1 - $t0, 2))") $("$PY" bench/python_versions/count_actions.py "$logs/$name.json")"
}

all=$(IFS=,; echo "${versions[*]}")
# BENCH_REPEAT rounds (default 1), each running every scenario once; the
# fastest run of each scenario is reported (the machine is shared and noisy).
reps=${BENCH_REPEAT:-1}
declare -A best_t best_j
for ((r = 1; r <= reps; r++)); do
  for scenario in multi "${versions[@]}"; do
    if [[ $scenario == multi ]]; then
      read -r t j < <(measure multi "--//:python_versions=$all")
    else
      read -r t j < <(measure "single-$scenario" "--//:python_versions=$scenario")
    fi
    echo "round $r, $scenario: ${t}s $j" >&2
    if [[ -z ${best_t[$scenario]:-} ]] || "$PY" -c "import sys; sys.exit(not $t < ${best_t[$scenario]})"; then
      best_t[$scenario]=$t
      best_j[$scenario]=$j
    fi
  done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
results="{\"versions\": \"$all\", \"rounds\": $reps, \"load\": \"$load0 -> $load1\", \"runs\": {"
results+="\"one_invocation\": {\"seconds\": ${best_t[multi]}, \"actions\": ${best_j[multi]}}"
for v in "${versions[@]}"; do
  results+=", \"single_$v\": {\"seconds\": ${best_t[$v]}, \"actions\": ${best_j[$v]}}"
done
results+="}}"
echo "$results" >bench/out/python_versions.json
bz shutdown >/dev/null 2>&1 || true

"$PY" - bench/out/python_versions.json <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
runs = r["runs"]
print(f"fastest of {r['rounds']} round(s) per scenario; load average (1/5/15 min) at start -> end: {r['load']}\n")
multi = runs.pop("one_invocation")
singles = list(runs.values())
n = len(singles)
mean_t = sum(s["seconds"] for s in singles) / n
mean_a = sum(s["actions"]["total"] for s in singles) / n
share = sum(s["actions"]["python_dependent"] / s["actions"]["total"] for s in singles) / n
ratio = multi["seconds"] / mean_t
goal = 1 + (n - 1) * share
print(f"| | wall time | actions (Python-dependent) |")
print(f"|---|---|---|")
print(f"| {n} versions, one invocation | {multi['seconds']:.1f} s | {multi['actions']['total']} ({multi['actions']['python_dependent']}) |")
for name, s in runs.items():
    print(f"| {name.replace('_', ' ')} | {s['seconds']:.1f} s | {s['actions']['total']} ({s['actions']['python_dependent']}) |")
print(f"| {n} single-version invocations, sum | {sum(s['seconds'] for s in singles):.1f} s | {sum(s['actions']['total'] for s in singles)} |")
print()
hits = sorted({s["actions"].get("tool_cache_hits", 0) for s in [multi, *singles]})
print(f"rocm-wheel tool: {'/'.join(map(str, hits))} cache-hit spawns per build (not counted above)")
print(f"share of Python-dependent actions in a single-version build: {share:.2f}")
print(f"ratio one invocation / mean single-version invocation: time {ratio:.2f}, actions {multi['actions']['total'] / mean_a:.2f}")
print(f"goal: ratio <= 1 + {n - 1} x share = {goal:.2f} -> {'met' if ratio <= goal else 'NOT met'}")
PYEOF

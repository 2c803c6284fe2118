#!/usr/bin/env bash
# The seed's scenario on the rocPRIM sort TU (bench/hip_split/sort.hip), cold,
# back to back in one invocation:
#  1. the 9 targets upstream's .bazelrc hard-codes (gfx908 gfx90a gfx942
#     gfx950 gfx1030 gfx1100 gfx1101 gfx1200 gfx1201) as one hipcc action;
#  2. --//:gfx=gfx120X-all, hip_library split (one device compile per target);
#  3. the same family through gfx12-generic (--//:gfx_generic): one compile.
# Reports wall and CPU seconds, and the projected cluster critical path (the
# longest chain of actions weighted by their measured times,
# bench/scale/critical_path.py; for hipcc, the action itself).
# Run inside the build root: scripts/buildroot bash bench/hip_split/targets.sh
# Results go to bench/hip_split/README.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
source bench/hip_split/lib.sh
out=$(mktemp -d "${TMPDIR:-/tmp}/hip_targets.XXXXXX")
trap 'rm -rf "$out"' EXIT
SEED_TARGETS=gfx908,gfx90a,gfx942,gfx950,gfx1030,gfx1100,gfx1101,gfx1200,gfx1201

# timed LABEL CMD...: runs CMD, appends "LABEL wall user sys" (bash's time:
# the build root has no /usr/bin/time).
timed() {
  local label=$1
  shift
  local TIMEFORMAT="$label %R %U %S"
  { time "$@" 2>"$out/$label.err"; } 2>>"$out/times"
}
load0=$(cut -d' ' -f1-3 /proc/loadavg)

renonce
# Warm the server and analysis of both configurations (not measured).
for g in "" --//:gfx_generic; do
  "$BAZEL" build "${FLAGS[@]}" --nobuild --//:gfx=gfx120X-all $g //bench/hip_split:sort 2>"$out/warm.log" ||
    { cat "$out/warm.log" >&2; exit 1; }
done

renonce
timed mono "$HIPCC" --rocm-path=/usr "--rocm-device-lib-path=$DEVICE_LIB" --offload-compress \
  $(printf -- '--offload-arch=%s ' ${SEED_TARGETS//,/ }) -O3 -std=c++17 -fPIC -I. -c bench/hip_split/sort.hip -o "$out/mono.o"

# The Bazel client's CPU is not the build's: CPU of the split flows is the sum
# of their actions' wall times from the execution log (each action is one
# single-threaded compiler process).
for flow in split generic; do
  renonce
  g=()
  [[ $flow == generic ]] && g=(--//:gfx_generic)
  "$BAZEL" build "${FLAGS[@]}" --//:gfx=gfx120X-all "${g[@]}" --execution_log_json_file="$out/$flow.json" \
    //bench/hip_split:sort >"$out/$flow.log" 2>&1 || { cat "$out/$flow.log" >&2; exit 1; }
  sed -n 's/.*Elapsed time: \([0-9.]*\)s.*/\1/p' "$out/$flow.log" | tail -1 >"$out/$flow.wall"
  python3 bench/scale/critical_path.py "$out/$flow.json" >"$out/$flow.path.json"
done

load=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$out" "$load0" "$load" <<'PY'
import json, os, sys
out, load0, load = sys.argv[1:]
mono = next(l.split() for l in open(os.path.join(out, "times")) if l.startswith("mono "))
mono_wall, mono_cpu = float(mono[1]), float(mono[2]) + float(mono[3])
rows = [("hipcc, 9 targets, one action", mono_wall, mono_cpu, mono_wall, 9)]
for flow, what in (("split", "hip_library, gfx120X-all, split"), ("generic", "hip_library, gfx120X-all via gfx12-generic")):
    wall = float(open(os.path.join(out, flow + ".wall")).read())
    path = json.load(open(os.path.join(out, flow + ".path.json")))
    log = open(os.path.join(out, flow + ".json")).read()
    compiles = log.count('"mnemonic": "HipDeviceCompile"')
    rows.append((what, wall, path["total_action_s"], path["critical_path_s"], compiles))
print("| flow | device compiles | wall s | CPU s | projected critical path s | wall / hipcc | CPU / hipcc |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for what, wall, cpu, crit, n in rows:
    print(f"| {what} | {n} | {wall:.1f} | {cpu:.1f} | {crit:.1f} | {wall / mono_wall:.2f} | {cpu / mono_cpu:.2f} |")
print(f"\nLoad average (1/5/15 min) at start: {load0}; at end: {load}")
PY

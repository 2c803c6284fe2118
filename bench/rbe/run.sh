#!/usr/bin/env bash
# `//:wheels` executed remotely (BuildGrid + buildbox worker on this machine)
# against the same build executed locally, in one run.
#
#   scripts/buildroot bench/rbe/run.sh      (inside the build root)
#   [BENCH_REPEAT=1]
#
# Per round, in the checkout's output base (the cargo-built rocm-wheel, an
# external repository, is kept; every action runs again after `bazel clean`):
#   local   `bazel clean`, local build, no cache: the anchor
#   remote  `bazel clean`, --config=rbe against freshly started, empty
#           services (PostgreSQL, BuildGrid, buildbox-casd, buildbox-worker
#           with the bubblewrap runner, as tests/e2e/clean_builds_test.sh starts them)
#   warm    `bazel clean`, --config=rbe again: every action a remote cache hit
# Client, server and worker share this machine's cores, so the remote/local
# ratio is remote execution's overhead here, not a speed-up anyone would see
# with real workers. Prints a Markdown table (results go to
# bench/rbe/README.md) and writes bench/out/rbe.json.
set -euo pipefail
source "$(dirname "$0")/../../tests/e2e/remote/lib.sh"
cd "$E2E_ROOT"
reps=${BENCH_REPEAT:-1}
mkdir -p bench/out/rbe "$E2E_TMP"
logs=$(cd bench/out/rbe && pwd)
RUN=$(mktemp -d "$E2E_TMP/bench-rbe.XXXXXX")
cleanup() {
  e2e_stop_services
  rm -rf "$RUN"
}
e2e_traps cleanup
e2e_require_tools
e2e_deadline 7200

# timed NAME FLAGS...: `bazel clean`, then //:wheels; prints "seconds spawns".
timed() {
  local name=$1 t0 t1
  shift
  e2e_bazel "$E2E_ROOT" "" clean >/dev/null 2>&1
  t0=$(date +%s.%N)
  e2e_bazel "$E2E_ROOT" "" build --disk_cache= --execution_log_json_file="$logs/$name.exec.json" \
    "$@" //:wheels >"$logs/$name.out" 2>&1 || { tail -30 "$logs/$name.out" >&2; exit 1; }
  t1=$(date +%s.%N)
  "$E2E_PY" - "$t0" "$t1" "$logs/$name.exec.json" <<'PYEOF'
import sys
sys.path.insert(0, "tests/lib")
from exec_log import read_spawns
print(round(float(sys.argv[2]) - float(sys.argv[1]), 2), len(read_spawns(sys.argv[3])))
PYEOF
}

# The cargo-built tool (a repository rule) is outside every timed build.
e2e_bazel "$E2E_ROOT" "" build //tools:rocm-wheel >"$logs/tool.out" 2>&1 || { tail -30 "$logs/tool.out" >&2; exit 1; }
load0=$(cut -d' ' -f1-3 /proc/loadavg)
rows=""
sep=""
for ((r = 1; r <= reps; r++)); do
  read -r local_s local_n < <(timed "local-$r" "${E2E_LOCAL_FLAGS[@]}")
  rm -rf "$RUN/round"
  mkdir -p "$RUN/round"
  e2e_start_postgres "$RUN/round" >&2
  e2e_start_buildgrid "$RUN/round" "$E2E_ROOT/tests/e2e/remote/buildgrid-rbe.yml.in" "s|@SQL@|$E2E_PG_URL|" >&2
  e2e_start_worker "$RUN/round" "$E2E_CACHE_PORT" OSFamily=Linux ISA=x86-64 >&2
  rbe=(--config=rbe "--remote_executor=grpc://127.0.0.1:$E2E_CACHE_PORT")
  read -r remote_s remote_n < <(timed "remote-$r" "${rbe[@]}")
  read -r warm_s warm_n < <(timed "warm-$r" "${rbe[@]}")
  e2e_stop_services
  echo "round $r: local ${local_s}s ($local_n spawns), remote ${remote_s}s ($remote_n), warm ${warm_s}s ($warm_n)" >&2
  rows+="$sep{\"local\": [$local_s, $local_n], \"remote\": [$remote_s, $remote_n], \"warm\": [$warm_s, $warm_n]}"
  sep=", "
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
echo "{\"rounds\": [$rows], \"load\": \"$load0 -> $load1\", \"cores\": $(nproc), \"date\": \"$(date -u +%Y-%m-%dT%H:%MZ)\"}" >bench/out/rbe.json

"$E2E_PY" - bench/out/rbe.json <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"`//:wheels`, {r['cores']} cores, load {r['load']}, {r['date']}\n")
print("| round | local (anchor) | remote, empty server | remote / local | per spawn, remote − local | remote-cache-warm rebuild | warm / local |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for i, x in enumerate(r["rounds"], 1):
    (ls, ln), (rs, rn), (ws, wn) = x["local"], x["remote"], x["warm"]
    print(f"| {i} | {ls:.1f} s, {ln} spawns | {rs:.1f} s, {rn} spawns | **{rs / ls:.2f}×** "
          f"| {(rs - ls) / max(rn, 1):.2f} s | {ws:.1f} s, {wn} spawns | **{ws / ls:.3f}×** |")
PYEOF

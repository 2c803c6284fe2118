#!/usr/bin/env bash
# Remote builds under faults: a scratch module (two HIP sources, one wheel;
# rocm-wheel prebuilt) built with remote.bazelrc's --config=remote-cache
# against BuildGrid on 127.0.0.1, each fault injected by this script, each
# run FAULT_RUNS times (default 2):
#   evicted     BwoB (--remote_download_outputs=toplevel): a build whose
#               intermediates are cache references; the CAS emptied; a
#               source edited: the next build needs an intermediate that is
#               gone
#   gone        the cache read by a build, then stopped for good; a source
#               edited and built again (a laptop off the VPN)
#   unreachable the endpoint refuses connections from the start
#   restart     BuildGrid killed during a build that uploads, restarted on
#               the same port
#   corrupt-top the wheel's blob in BuildGrid's storage overwritten under its
#               digest, then read by a fresh build
#   corrupt-mid an intermediate's blob overwritten, then read by a build
#               after an edit
#   slow        every chunk held FAULT_DELAY_MS (default 20) by a loopback
#               proxy, each way: an uploading build, then a downloading one
#   dropping    every proxied connection cut after FAULT_CUT_BYTES (default
#               32768) bytes: an uploading build, then a downloading one
#   rbe-restart --config=rbe (PostgreSQL, BuildGrid, a buildbox worker):
#               BuildGrid killed once the worker ran an action, restarted on
#               the same port
#   rbe-unreachable
#               --config=rbe, the executor refuses connections from the start
# Every build must either complete with the wheel byte-identical to a
# fault-free local build of the same sources, or fail within FAULT_FAIL_FAST
# seconds (default 120) naming the endpoint or the remote cache error; no
# wheel may come from bad bytes. Each fault also shows that it reached the
# build (a vacuous run fails the test), and the controls show what the
# configs' settings are for: eviction without retries, an intermediate
# corrupted or gone under toplevel, and an executor restart with Bazel's
# default retries each fail. Prints one line per fault:
# runs, completed, failed clearly, wrong outputs, time against the
# fault-free build, actions executed (docs/rbe.md, "When the cache
# misbehaves").
#
# unreachable and rbe-unreachable run in the background beside the others
# (FAULT_BACKGROUND=1): they need no server and mostly wait out Bazel's
# retries. bench/remote_faults runs the same on //:wheels in a copy of the
# checkout, one fault at a time: FAULT_CHECKOUT=1 FAULT_TARGETS FAULT_FLAGS
# FAULT_EDIT FAULT_MID FAULT_BACKGROUND=0 FAULT_CONTROLS=0 FAULT_WARM=1.
#
# FAULT_WARM=1 meets each cache fault the way an incremental build does,
# which on //:wheels costs minutes where a cold build costs eleven: the
# fault-free cold build that is the reference also fills the cache; every
# fault then starts from an output base of cache hits and builds an edit
# (restart, slow and dropping each their own, so that it uploads), or, for
# the faults that download (corrupt-top and the proxies' second build), a
# fresh output base of hits. Each build's time is set against the fault-free
# build of its kind, measured in the same run: the edit after the hits, the
# hits, or (the rbe faults, still cold) the cold build.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$E2E_ROOT/tests/lib/scratch_test.sh"
e2e_require_tools
RUNS=${FAULT_RUNS:-2}
# FAULTS: the faults to inject (default all), e.g. FAULTS="evicted restart".
FAULTS=${FAULTS:-evicted gone unreachable restart corrupt-top corrupt-mid slow dropping rbe-restart rbe-unreachable}
WARM=${FAULT_WARM:-0}
wanted() { [[ " $FAULTS " == *" $1 "* ]]; }
# FAULT_CONTROLS=0: no control builds (the benchmark's choice).
CONTROL=(control)
[[ ${FAULT_CONTROLS:-1} == 1 ]] || CONTROL=()
e2e_deadline "${FAULT_TEST_TIMEOUT:-1800}"

mkdir -p "$E2E_TMP"
# The dead-endpoint builds running in the background: PID:NAME; each
# writes its exit status to $work/NAME.rc when it ends.
DEAD_JOBS=()
work=$(mktemp -d "$E2E_TMP/faults.XXXXXX")
mkdir -p "$work/main"
cleanup() {
  local ob job
  # Only those still running: an ended job's PID may be another process's.
  for job in "${DEAD_JOBS[@]}"; do
    [[ -f $work/${job#*:}.rc ]] || kill "${job%%:*}" 2>/dev/null || true
  done
  for ob in "$work"/ob-*; do
    [[ -d $ob ]] && (cd / && timeout 60 "$BAZEL" --output_base="$ob" shutdown >/dev/null 2>&1 || true)
  done
  e2e_stop_services
  # FAULT_LOGS=DIR: every build's log and --explain file kept there.
  if [[ ${FAULT_LOGS:-} ]]; then
    mkdir -p "$FAULT_LOGS"
    cp "$work"/*.log "$work"/*.explain "$FAULT_LOGS"/ 2>/dev/null || true
  fi
  [[ ${KEEP:-} ]] || rm -rf "$work"
}
e2e_traps cleanup

cd "$work/main"
if [[ ${FAULT_CHECKOUT:-} ]]; then
  e2e_copy_checkout "$work/main"
  TARGETS=(${FAULT_TARGETS:-//:wheels})
  read -r -a FLAGS <<<"${FAULT_FLAGS:-}"
  EDIT=${FAULT_EDIT:-examples/pjrt/kernels/vector_add.hip}
  MID=${FAULT_MID:-/radix_sort.hip.pic.o}
else
  scratch_module remote_faults "$root"
  use_prebuilt_tool "$root"
  fixture_copy remote_faults .
  cp "$root/tests/outputs/gfx/vadd.hip" .
  echo "import $root/remote.bazelrc" >>.bazelrc
  # //:host: C++ that rules_cc compiles, untouched by the edit.
  TARGETS=(//:wheel //:host)
  FLAGS=(--@rules_rocm//:gfx=gfx1201)
  EDIT=scale.hip
  # vadd.hip's object (its host code and offload bundle): an intermediate
  # that the link after scale.hip's edit needs.
  MID=/vadd.hip.pic.o
fi
cp "$EDIT" "$work/edit.0"
# The workspace the builds run in; the dead-endpoint faults use copies.
WS=$work/main

e2e_start_buildgrid "$work/bg"
port=$E2E_CACHE_PORT
objects=$work/bg/cas/cas/objects
RC=(--config=remote-cache "--remote_cache=grpc://127.0.0.1:$port")
# As remote.bazelrc tells users to take toplevel.
TOPLEVEL=(--remote_download_outputs=toplevel --experimental_inmemory_dotd_files)

# source STATE: the edited source as the state makes it (0: as given).
source_state() {
  cp "$work/edit.0" "$EDIT"
  (($1 == 0)) || printf '\nextern "C" __global__ void fault_%d(float* x) { x[0] += %d.0f; }\n' "$1" "$1" >>"$EDIT"
}

# b NAME OUTPUT_BASE FLAGS...: builds the targets; the log in $work/NAME.log;
# sets B_RC, B_SECONDS, B_EXECUTED (spawns run, not cache hits), B_WHEELS
# (every wheel the targets name, relative to the execution root) and B_SHA
# (over those wheels; "" on failure).
b() {
  local name=$1 ob=$work/ob-$2 t0=$SECONDS
  shift 2
  B_RC=0
  # --explain: why each action ran (kept with KEEP=1 or FAULT_LOGS).
  e2e_bazel "$WS" "$ob" build --disk_cache= --explain="$work/$name.explain" --verbose_explanations \
    "${FLAGS[@]}" "$@" "${TARGETS[@]}" >"$work/$name.log" 2>&1 || B_RC=$?
  B_SECONDS=$((SECONDS - t0))
  B_EXECUTED=$("$E2E_PY" - "$work/$name.log" <<'PY'
import re, sys
m = re.findall(r"^INFO: (\d+) processes?: (.*)\.$", open(sys.argv[1]).read(), re.M)
if not m:
    print(0)
    sys.exit()
total, parts = m[-1]
skip = sum(int(n) for n, kind in re.findall(r"(\d+) ([a-z ]+?)(?:,|$)", parts)
           if kind in ("internal", "remote cache hit", "disk cache hit"))
print(int(total) - skip)
PY
)
  B_SHA=""
  B_WHEELS=()
  ((B_RC == 0)) || return 0
  local query=${TARGETS[*]}
  mapfile -t B_WHEELS < <(e2e_bazel "$WS" "$ob" cquery "${FLAGS[@]}" --output=files "${query// / + }" 2>/dev/null |
    grep '\.whl$' | sort)
  ((${#B_WHEELS[@]})) || fail "$name: no wheel among the outputs of ${TARGETS[*]}"
  B_SHA=$(cd "$ob/execroot/_main" && sha256sum "${B_WHEELS[@]}" | sha256sum | cut -d' ' -f1)
}

# clean OUTPUT_BASE: nothing of earlier builds' outputs left in it.
clean() {
  e2e_bazel "$WS" "$work/ob-$1" clean >/dev/null 2>&1 || true
}

# The fault-free reference: each source state built locally, no cache
# (FAULT_WARM=1: state 0 built so fills the empty cache, the later states
# read its hits and upload nothing).
declare -A REF REF_EXECUTED
reference() {
  [[ -n ${REF[$1]:-} ]] && return
  local flags=("${E2E_LOCAL_FLAGS[@]}")
  if ((WARM)); then
    flags=("${RC[@]}")
    (($1 == 0)) || flags+=(--noremote_upload_local_results)
  fi
  source_state "$1"
  b "ref-$1" ref "${flags[@]}"
  ((B_RC == 0)) || { tail -30 "$work/ref-$1.log" >&2; fail "the fault-free build of state $1"; }
  REF[$1]=$B_SHA
  # After state 0 in the same output base: the actions the edit re-runs.
  REF_EXECUTED[$1]=$B_EXECUTED
  if [[ -z ${ANCHOR_SECONDS[cold]:-} ]]; then
    ANCHOR_SECONDS[cold]=$B_SECONDS
    ANCHOR_EXECUTED[cold]=$B_EXECUTED
  fi
}

# The fault-free builds the faults' times are set against: cold (the
# reference of state 0), and with FAULT_WARM=1 hits (a fresh output base of
# cache hits) and edit (state 1 built after those hits). anchor KIND: the
# verdicts that follow count against KIND.
declare -A ANCHOR_SECONDS ANCHOR_EXECUTED
ANCHOR=cold
anchor() { ANCHOR=$1; }

# warm_base NAME: output base t holds cache hits of state 0 (FAULT_WARM=1).
warm_base() {
  source_state 0
  clean t
  b "$1-hits" t "${RC[@]}" "${@:2}"
  ((B_RC == 0)) || fail "$1: the build of cache hits before the fault"
}

# seed STATE [FLAGS...]: the cache holds every output of the state's build.
seed() {
  local state=$1
  shift
  source_state "$state"
  clean seed
  b "seed-$state" seed "${RC[@]}" "$@"
  ((B_RC == 0)) || { tail -30 "$work/seed-$state.log" >&2; fail "seeding the cache with state $state"; }
}

# What Bazel says when the cache served bytes that are not what their
# digest says: the output, both digests, "remote cache error" (it names no
# endpoint; docs/rbe.md says what to do).
CLEAR_MESSAGE="Failed to fetch blobs because of a remote cache error"

# verdict FAULT NAME STATE PORT: records the build NAME just made against the
# state's reference: completed with its bytes, failed clearly (fast, naming
# the endpoint or the remote cache error), or wrong.
declare -A RUNS_OF COMPLETED CLEAR WRONG SECS EXECUTED BASE_SECS BASE_EXECUTED
ORDER=()
verdict() {
  local fault=$1 name=$2 state=$3
  [[ -n ${RUNS_OF[$fault]:-} ]] || ORDER+=("$fault")
  RUNS_OF[$fault]=$((${RUNS_OF[$fault]:-0} + 1))
  SECS[$fault]=$((${SECS[$fault]:-0} + B_SECONDS))
  EXECUTED[$fault]=$((${EXECUTED[$fault]:-0} + B_EXECUTED))
  BASE_SECS[$fault]=$((${BASE_SECS[$fault]:-0} + ${ANCHOR_SECONDS[$ANCHOR]}))
  BASE_EXECUTED[$fault]=$((${BASE_EXECUTED[$fault]:-0} + ${ANCHOR_EXECUTED[$ANCHOR]}))
  if ((B_RC == 0)); then
    if [[ $B_SHA == "${REF[$state]}" ]]; then
      COMPLETED[$fault]=$((${COMPLETED[$fault]:-0} + 1))
      echo "$name: completed in ${B_SECONDS}s ($B_EXECUTED actions executed), the wheels byte-identical to the fault-free build's"
    else
      WRONG[$fault]=$((${WRONG[$fault]:-0} + 1))
      echo "$name: WRONG OUTPUT: wheels' sha256 $B_SHA, the fault-free build's ${REF[$state]}" >&2
    fi
  elif ((B_SECONDS <= ${FAULT_FAIL_FAST:-120})) && grep -qE "127.0.0.1:$4|$CLEAR_MESSAGE" "$work/$name.log"; then
    CLEAR[$fault]=$((${CLEAR[$fault]:-0} + 1))
    echo "$name: failed in ${B_SECONDS}s (exit $B_RC): $(grep -m1 -E "127.0.0.1:$4|$CLEAR_MESSAGE" "$work/$name.log" | cut -c1-240)"
  else
    WRONG[$fault]=$((${WRONG[$fault]:-0} + 1))
    tail -20 "$work/$name.log" >&2
    echo "$name: FAILED UNCLEARLY (exit $B_RC after ${B_SECONDS}s)" >&2
  fi
}

# expect_control NAME PATTERN WHY: the control build NAME failed saying PATTERN.
expect_control() {
  ((B_RC != 0)) && grep -q "$2" "$work/$1.log" || fail "$1: $3 (exit $B_RC)"
  echo "$1: exit $B_RC, $(grep -o -m1 "$2" "$work/$1.log")"
}

# expect_reached NAME PATTERN WHAT: the build NAME's log shows the fault.
expect_reached() {
  grep -q "$2" "$work/$1.log" || fail "$1: $3 (a vacuous run)"
}

# corrupt DIGEST: BuildGrid's stored bytes of DIGEST (sha256) changed in
# place, same size, same name.
corrupt() {
  local f=$objects/${1:0:2}/${1:2}
  [[ -f $f ]] || fail "no blob $1 in BuildGrid's storage"
  # Left as it is when a run before this one corrupted it already (the cache
  # keeps a blob it has: nothing uploads over it).
  "$E2E_PY" - "$f" "$1" <<'PY'
import hashlib, sys
path, digest = sys.argv[1:]
data = bytearray(open(path, "rb").read())
if hashlib.sha256(data).hexdigest() == digest:
    data[len(data) // 2] ^= 0xFF
    open(path, "wb").write(data)
PY
}

# mid_digest EXEC_LOG: the digest of the intermediate $MID in an execution log.
mid_digest() {
  PYTHONPATH=$E2E_ROOT/tests/lib "$E2E_PY" - "$1" "$MID" <<'PY'
import sys
from exec_log import read_spawns
for s in read_spawns(sys.argv[1]):
    for o in s.get("actualOutputs", []):
        if o["path"].endswith(sys.argv[2]):
            print(o["digest"]["hash"])
            sys.exit()
PY
}

# restart_buildgrid_after DIR MARKER: in the background, the BuildGrid of
# DIR killed once MARKER (a shell test) holds (mid-build: what comes after
# fails), then started again on the same port with the same storage.
restart_buildgrid_after() {
  local dir=$1
  rm -f "$dir/killed" "$dir/build-ended" "$dir/restarted.pid" "$dir/restarter.ended"
  # Killed by another process: not a job this shell reports as "Killed".
  disown "$E2E_BGD_PID" 2>/dev/null || true
  (
    # However it ends (restarted reads the files, e2e_await_file).
    trap 'touch "$dir/restarter.ended"' EXIT
    until eval "$2"; do
      # The build ended first: nothing to kill (restarted reports it).
      [[ -f $dir/build-ended ]] && exit 0
      sleep 0.2
    done
    kill -KILL -- "-$E2E_BGD_PID" 2>/dev/null || true
    date +%s >"$dir/killed"
    sleep 3
    e2e_restart_buildgrid "$dir"
    echo "$E2E_BGD_PID" >"$dir/restarted.pid"
  ) &
}

# restarted DIR: the restart above is over; its server is ours to stop.
restarted() {
  touch "$1/build-ended"
  e2e_await_file "$1/restarter.ended" 120 || fail "the restart of BuildGrid did not end within 120 s"
  [[ -f $1/killed ]] || fail "the server was never killed"
  [[ -f $1/restarted.pid ]] || fail "BuildGrid did not come back on $E2E_CACHE_PORT"
  E2E_BGD_PID=$(cat "$1/restarted.pid")
  E2E_GROUPS+=("$E2E_BGD_PID")
}

# edit_state BASE RUN: the source state a fault's build that must upload
# edits to (FAULT_WARM=1: one no other build has put in the cache).
edit_state() { echo $(($1 + 10 * ($2 - 1))); }

# through_proxy FAULT RUN STATE PROXY_FLAGS...: a build that uploads, then a
# fresh one that downloads, both through a loopback proxy with the fault
# (FAULT_WARM=1: the edit to STATE after cache hits; else a cold build of
# state 0).
through_proxy() {
  local fault=$1 run=$2 state=$3 pport
  shift 3
  pport=$(e2e_free_port)
  rm -f "$work/proxy-$fault.log"
  e2e_spawn "$work/proxy-$fault.out" "$E2E_PY" "$E2E_ROOT/tests/e2e/remote/flaky_proxy.py" \
    "$pport" "$port" --log "$work/proxy-$fault.log" "$@"
  local proxy=$E2E_SPAWNED
  e2e_wait_port "$proxy" "$pport" 30 || fail "the proxy did not start: $(cat "$work/proxy-$fault.out")"
  if ((WARM)); then
    reference "$state"
    warm_base "$fault-$run"
    anchor edit
  else
    find "$objects" -type f -delete
    state=0
    clean t
  fi
  source_state "$state"
  b "$fault-up-$run" t --config=remote-cache "--remote_cache=grpc://127.0.0.1:$pport"
  verdict "$fault" "$fault-up-$run" "$state" "$pport"
  clean t
  ((WARM)) && anchor hits
  b "$fault-down-$run" t --config=remote-cache "--remote_cache=grpc://127.0.0.1:$pport"
  verdict "$fault" "$fault-down-$run" "$state" "$pport"
  e2e_stop_group "$proxy"
}

# dead_endpoint_build FAULT RUN: one build against an endpoint that refuses
# connections, in its own copy of the module and output base (FAULT_WARM=1
# and unreachable: the edit after cache hits, in output base t); its result
# appended to $work/dead.results for the verdicts at the end.
dead_endpoint_build() {
  local fault=$1 run=$2 dead state=0 kind=cold ob=$1-$2
  dead=$(e2e_free_port)
  if ((WARM)) && [[ $fault == unreachable ]]; then
    warm_base "$fault-$run"
    state=1 kind=edit ob=t
  else
    WS=$work/$fault-$run
    rm -rf "$WS"
    cp -a "$work/main" "$WS"
    cd "$WS"
  fi
  source_state "$state"
  if [[ $fault == unreachable ]]; then
    b "$fault-$run" "$ob" --config=remote-cache "--remote_cache=grpc://127.0.0.1:$dead"
  else
    # No local fallback: the build fails once the retries are spent,
    # naming the endpoint.
    b "$fault-$run" "$ob" --config=rbe "--remote_executor=grpc://127.0.0.1:$dead"
  fi
  echo "$fault $fault-$run $state $dead $kind $B_RC $B_SECONDS $B_EXECUTED ${B_SHA:--}" >>"$work/dead.results"
}

# dead_endpoint_faults: unreachable and rbe-unreachable need no server and
# mostly wait out Bazel's retries: with FAULT_BACKGROUND=1 (the default; the
# benchmark sets 0) every run of them at once, in the background, beside the
# other faults.
dead_endpoint_faults() {
  local fault run
  for fault in unreachable rbe-unreachable; do
    wanted "$fault" || continue
    for run in $(seq "$RUNS"); do
      # FAULT_WARM=1's unreachable builds in output base t: not beside others.
      if [[ ${FAULT_BACKGROUND:-1} == 1 ]] && ! { ((WARM)) && [[ $fault == unreachable ]]; }; then
        {
          rc=0
          (dead_endpoint_build "$fault" "$run") >"$work/$fault-$run.out" 2>&1 || rc=$?
          echo "$rc" >"$work/$fault-$run.rc"
        } &
        DEAD_JOBS+=("$!:$fault-$run")
      else
        (dead_endpoint_build "$fault" "$run")
      fi
    done
  done
}

reference 0
# The faults that build after an edit.
if ((WARM)) || wanted evicted || wanted gone || wanted corrupt-mid; then
  reference 1
  # Else a build that missed the edit would pass for one that made it.
  [[ ${REF[0]} != "${REF[1]}" ]] || fail "the edit of $EDIT does not change the wheels"
fi
echo "--- fault-free cold build: ${ANCHOR_SECONDS[cold]}s, ${ANCHOR_EXECUTED[cold]} actions executed"
if ((WARM)); then
  # The first build in output base t starts its server: not measured.
  warm_base warmup
  warm_base anchor
  ANCHOR_SECONDS[hits]=$B_SECONDS ANCHOR_EXECUTED[hits]=$B_EXECUTED
  source_state 1
  b anchor-edit t "${RC[@]}" --noremote_upload_local_results
  ((B_RC == 0)) && [[ $B_SHA == "${REF[1]}" ]] || fail "the fault-free edit after cache hits"
  ANCHOR_SECONDS[edit]=$B_SECONDS ANCHOR_EXECUTED[edit]=$B_EXECUTED
  # Both in one build: a fresh output base after the edit (corrupt-mid).
  ANCHOR_SECONDS[fresh-edit]=$((ANCHOR_SECONDS[hits] + B_SECONDS)) ANCHOR_EXECUTED[fresh-edit]=$B_EXECUTED
  echo "--- fault-free: a fresh output base of cache hits ${ANCHOR_SECONDS[hits]}s (${ANCHOR_EXECUTED[hits]} actions executed), the edit after them ${ANCHOR_SECONDS[edit]}s (${ANCHOR_EXECUTED[edit]})"
fi
touch "$work/dead.results"
dead_endpoint_faults

# Set against the edit after cache hits (FAULT_WARM=1) or the cold build;
# the faults below that differ set their own.
((WARM)) && anchor edit
if wanted evicted; then
  echo "--- evicted"
  # The control: without eviction retries the same scenario fails, so it
  # does lose an intermediate the build needs.
  for run in "${CONTROL[@]}" $(seq "$RUNS"); do
    retries=()
    [[ $run == control ]] && retries=(--experimental_remote_cache_eviction_retries=0)
    seed 0 "${TOPLEVEL[@]}"
    clean t
    b "evicted-hits-$run" t "${RC[@]}" "${TOPLEVEL[@]}"
    ((B_RC == 0)) || fail "the cached build before eviction"
    find "$objects" -type f -delete
    source_state 1
    b "evicted-$run" t "${RC[@]}" "${TOPLEVEL[@]}" "${retries[@]}"
    if [[ $run == control ]]; then
      expect_control evicted-control "do not exist remotely" "without eviction retries the build did not lose an intermediate"
    else
      expect_reached "evicted-$run" "Found transient remote cache error, retrying the build" "the build never missed an evicted blob"
      verdict evicted "evicted-$run" 1 "$port"
    fi
  done
fi

if wanted gone; then
  echo "--- gone"
  # The control: with toplevel the intermediates are the cache's only, and
  # the build after the cache went needs one.
  for run in "${CONTROL[@]}" $(seq "$RUNS"); do
    mode=()
    [[ $run == control ]] && mode=("${TOPLEVEL[@]}")
    seed 0 "${mode[@]}"
    clean t
    b "gone-hits-$run" t "${RC[@]}" "${mode[@]}"
    ((B_RC == 0)) || fail "the cached build before the cache went"
    e2e_stop_buildgrid
    source_state 1
    b "gone-$run" t "${RC[@]}" "${mode[@]}"
    expect_reached "gone-$run" "UNAVAILABLE" "the build never tried the stopped cache"
    if [[ $run == control ]]; then
      expect_control gone-control "UNAVAILABLE" "with toplevel the build did not need an intermediate from the cache"
    else
      verdict gone "gone-$run" 1 "$port"
      # The outputs of the hits are local: without the cache only the
      # edit's actions run (not, say, every C++ compile again).
      ((B_EXECUTED == REF_EXECUTED[1])) ||
        fail "gone-$run: $B_EXECUTED actions ran, the edit needs ${REF_EXECUTED[1]}; why each ran: $work/gone-$run.explain"
    fi
    e2e_restart_buildgrid "$work/bg"
  done
fi

if wanted restart; then
  echo "--- restart"
  for run in $(seq "$RUNS"); do
    # Killed once the build's first upload lands: in an empty CAS, or
    # (FAULT_WARM=1) one that holds state 0's.
    state=0 blobs=0
    if ((WARM)); then
      state=$(edit_state 2 "$run")
      reference "$state"
      warm_base "restart-$run"
      blobs=$(find "$objects" -type f | wc -l)
    else
      find "$objects" -type f -delete
      clean t
    fi
    source_state "$state"
    restart_buildgrid_after "$work/bg" "(( \$(find '$objects' -type f | wc -l) > $blobs ))"
    b "restart-$run" t "${RC[@]}"
    restarted "$work/bg"
    expect_reached "restart-$run" "WARNING: Remote Cache" "the build did not see the server go"
    verdict restart "restart-$run" "$state" "$port"
  done
fi

if wanted corrupt-top; then
  echo "--- corrupt-top"
  ((WARM)) && anchor hits
  for run in $(seq "$RUNS"); do
    seed 0
    # The first wheel the targets name (every one, for the scratch module).
    corrupt "$(sha256sum "$work/ob-seed/execroot/_main/${B_WHEELS[0]}" | cut -d' ' -f1)"
    clean t
    b "corrupt-top-$run" t "${RC[@]}"
    expect_reached "corrupt-top-$run" "does not match received digest" "the build never read the corrupted blob"
    verdict corrupt-top "corrupt-top-$run" 0 "$port"
  done
fi

if wanted corrupt-mid; then
  echo "--- corrupt-mid"
  ((WARM)) && anchor fresh-edit
  # The control: with toplevel the intermediate is read only when the link
  # after the edit needs it, and the build fails (exit 39).
  for run in "${CONTROL[@]}" $(seq "$RUNS"); do
    mode=()
    [[ $run == control ]] && mode=("${TOPLEVEL[@]}")
    # A cache without an earlier run's corrupted blobs (a build that runs
    # their actions would fetch the intermediate's good bytes first), and a
    # clean output base: nothing of the intermediate outside the cache.
    # (FAULT_WARM=1 keeps the cache: its one run corrupts a blob no run
    # before has.)
    ((WARM)) || find "$objects" -type f -delete
    seed 0 --execution_log_json_file="$work/mid-$run.exec.json"
    digest=$(mid_digest "$work/mid-$run.exec.json")
    [[ -n $digest ]] || fail "no $MID in the execution log"
    corrupt "$digest"
    source_state 1
    clean t
    b "corrupt-mid-$run" t "${RC[@]}" "${mode[@]}"
    expect_reached "corrupt-mid-$run" "does not match received digest" "the build never read the corrupted blob"
    if [[ $run == control ]]; then
      expect_control corrupt-mid-control "$CLEAR_MESSAGE" "with toplevel a corrupt intermediate did not fail the build"
    else
      verdict corrupt-mid "corrupt-mid-$run" 1 "$port"
    fi
  done
fi

if wanted slow; then
  echo "--- slow"
  for run in $(seq "$RUNS"); do
    through_proxy slow "$run" "$(edit_state 3 "$run")" --delay-ms "${FAULT_DELAY_MS:-20}"
    [[ -s $work/proxy-slow.log ]] || fail "slow #$run: no connection went through the proxy (a vacuous run)"
  done
fi

if wanted dropping; then
  echo "--- dropping"
  for run in $(seq "$RUNS"); do
    through_proxy dropping "$run" "$(edit_state 4 "$run")" --cut-after "${FAULT_CUT_BYTES:-32768}"
    grep -q ' cut$' "$work/proxy-dropping.log" || fail "dropping #$run: the proxy cut no connection (a vacuous run)"
    echo "dropping #$run: $(grep -c ' cut$' "$work/proxy-dropping.log") connections cut"
  done
fi

# worker_ran_one: a shell test that holds once the worker has finished one
# more action than it had now.
worker_ran_one() {
  local now
  now=$(grep -c 'Runner exited' "$work/rbe/worker.log" || true)
  echo "(( \$(grep -c 'Runner exited' '$work/rbe/worker.log') > $now ))"
}

if wanted rbe-restart; then
  echo "--- rbe-restart"
  anchor cold
  # The executor, as clean_builds_test.sh starts it, in place of the cache.
  e2e_stop_buildgrid
  mkdir -p "$work/rbe"
  e2e_start_postgres "$work/rbe"
  e2e_start_buildgrid "$work/rbe" "$E2E_ROOT/tests/e2e/remote/buildgrid-rbe.yml.in" "s|@SQL@|$E2E_PG_URL|"
  e2e_start_worker "$work/rbe" "$E2E_CACHE_PORT" OSFamily=Linux ISA=x86-64
  RBE=(--config=rbe "--remote_executor=grpc://127.0.0.1:$E2E_CACHE_PORT")
  for run in $(seq "$RUNS"); do
    # Nothing cached: every action executes on the worker.
    find "$work/rbe/cas" -type f -delete
    source_state 0
    clean t
    restart_buildgrid_after "$work/rbe" "$(worker_ran_one)"
    b "rbe-restart-$run" t "${RBE[@]}"
    restarted "$work/rbe"
    # Bazel's retries say nothing; restarted has checked that the server
    # was killed while the build ran.
    verdict rbe-restart "rbe-restart-$run" 0 "$E2E_CACHE_PORT"
  done
  # The control: with Bazel's default retries the same restart fails the
  # build.
  if ((${#CONTROL[@]})); then
    find "$work/rbe/cas" -type f -delete
    clean t
    restart_buildgrid_after "$work/rbe" "$(worker_ran_one)"
    b rbe-restart-control t "${RBE[@]}" --remote_retries=5
    restarted "$work/rbe"
    expect_control rbe-restart-control "UNAVAILABLE" "with 5 retries a restart did not fail the build"
  fi
fi

for job in "${DEAD_JOBS[@]}"; do
  name=${job#*:}
  e2e_await_file "$work/$name.rc" "$(e2e_remaining)" || fail "$name did not end before the test's deadline"
  [[ $(cat "$work/$name.rc") == 0 ]] || { cat "$work/$name.out" >&2; fail "$name did not run (exit $(cat "$work/$name.rc"))"; }
done
DEAD_JOBS=()
while read -r fault name state dport ANCHOR B_RC B_SECONDS B_EXECUTED B_SHA; do
  [[ $B_SHA != - ]] || B_SHA=""
  verdict "$fault" "$name" "$state" "$dport"
done <"$work/dead.results"

echo "fault | runs | completed | failed clearly | wrong outputs | time vs fault-free | actions executed (fault-free)"
bad=0
for fault in "${ORDER[@]}"; do
  n=${RUNS_OF[$fault]}
  printf '%s | %d | %d | %d | %d | %s | %s\n' "$fault" "$n" "${COMPLETED[$fault]:-0}" "${CLEAR[$fault]:-0}" \
    "${WRONG[$fault]:-0}" "$(awk -v s="${SECS[$fault]}" -v d="${BASE_SECS[$fault]}" -v n="$n" \
      'BEGIN { printf "%.1fx (%d s of %d s)", s / (d ? d : 1), s / n, d / n }')" \
    "$(awk -v e="${EXECUTED[$fault]}" -v b="${BASE_EXECUTED[$fault]}" -v n="$n" 'BEGIN { printf "%.1f (%.0f)", e / n, b / n }')"
  bad=$((bad + ${WRONG[$fault]:-0}))
done
((bad == 0)) || fail "$bad builds under faults gave a wrong wheel or failed without naming the endpoint"
echo "ok: every build under a fault completed with the fault-free bytes or failed clearly"

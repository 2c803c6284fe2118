#!/usr/bin/env bash
# Remote builds under faults: a scratch module (two HIP sources, one wheel;
# rocm-wheel prebuilt) built with remote.bazelrc's --config=remote-cache
# against BuildGrid on 127.0.0.1, each fault injected by this script, each
# run FAULT_RUNS times (default 2):
#   evicted     a build whose intermediates are cache references; the CAS is
#               emptied; a source edited: the next build needs an intermediate
#               that is gone
#   unreachable the endpoint refuses connections from the start
#   restart     BuildGrid killed during a build that uploads, restarted on
#               the same port
#   corrupt-top the wheel's blob in BuildGrid's storage overwritten under its
#               digest, then downloaded by a fresh build
#   corrupt-mid an intermediate's blob overwritten, then downloaded by a build
#               after an edit
# Every build must either complete with the wheel byte-identical to a
# fault-free local build of the same sources, or fail within FAULT_FAIL_FAST
# seconds (default 120) naming the endpoint or the remote cache error; no
# wheel may come from bad bytes. Controls: without eviction retries the
# eviction scenario fails (it does lose an intermediate), and each corrupt
# run must show Bazel reading the corrupted blob (a digest mismatch). Prints one
# line per fault: runs, completed, failed clearly, wrong outputs, time
# against the fault-free build (docs/rbe.md, "When the cache misbehaves").
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$E2E_ROOT/tests/lib/scratch_test.sh"
e2e_require_tools
RUNS=${FAULT_RUNS:-2}
# FAULTS: the faults to inject (default all), e.g. FAULTS="evicted restart".
FAULTS=${FAULTS:-evicted unreachable restart corrupt-top corrupt-mid}
wanted() { [[ " $FAULTS " == *" $1 "* ]]; }
e2e_deadline "${FAULT_TEST_TIMEOUT:-1500}"

work=$(mktemp -d "$E2E_TMP.faults.XXXXXX")
mkdir -p "$work/main"
cleanup() {
  local ob
  for ob in "$work"/ob-*; do
    [[ -d $ob ]] && (cd / && timeout 60 "$BAZEL" --output_base="$ob" shutdown >/dev/null 2>&1 || true)
  done
  e2e_stop_services
  [[ ${KEEP:-} ]] || rm -rf "$work"
}
e2e_traps cleanup

cd "$work/main"
scratch_module remote_faults "$root"
use_prebuilt_tool "$root"
fixture_copy remote_faults .
cp "$root/tests/outputs/gfx/vadd.hip" .
echo "import $root/remote.bazelrc" >>.bazelrc
cp scale.hip scale.hip.0

e2e_start_buildgrid "$work/bg"
port=$E2E_CACHE_PORT
objects=$work/bg/cas/cas/objects
RC=(--config=remote-cache "--remote_cache=grpc://127.0.0.1:$port")

# source STATE: scale.hip as the state's edit makes it (0: as given).
source_state() {
  cp scale.hip.0 scale.hip
  (($1 == 0)) || printf '\nextern "C" __global__ void scale_%d(float* x) { x[0] += %d.0f; }\n' "$1" "$1" >>scale.hip
}

# b NAME OUTPUT_BASE FLAGS...: builds the wheel; its log in $work/NAME.log;
# sets B_RC and B_SECONDS, and B_SHA (the wheel's sha256, "" on failure).
b() {
  local name=$1 ob=$work/ob-$2 t0=$SECONDS
  shift 2
  B_RC=0
  e2e_bazel "$work/main" "$ob" build --disk_cache= --@rules_rocm//:gfx=gfx1201 "$@" //:wheel \
    >"$work/$name.log" 2>&1 || B_RC=$?
  B_SECONDS=$((SECONDS - t0))
  B_SHA=""
  if ((B_RC == 0)); then
    B_SHA=$(sha256sum "$work/main"/bazel-bin/faults-0.1.0-*.whl | cut -d' ' -f1)
  fi
}

# The fault-free reference: each source state built locally, no cache.
declare -A REF
reference() {
  [[ -n ${REF[$1]:-} ]] && return
  source_state "$1"
  b "ref-$1" ref "${E2E_LOCAL_FLAGS[@]}"
  ((B_RC == 0)) || { tail -30 "$work/ref-$1.log" >&2; fail "the fault-free local build of state $1"; }
  REF[$1]=$B_SHA
  [[ -n ${REF_SECONDS:-} ]] || REF_SECONDS=$B_SECONDS
}

# seed STATE: the cache holds every output of the state's build.
seed() {
  source_state "$1"
  e2e_bazel "$work/main" "$work/ob-seed" clean >/dev/null 2>&1 || true
  b "seed-$1" seed "${RC[@]}"
  ((B_RC == 0)) || { tail -30 "$work/seed-$1.log" >&2; fail "seeding the cache with state $1"; }
}

# What Bazel says when the cache served bytes that are not what their
# digest says: the output, both digests, "remote cache error" (it names no
# endpoint; docs/rbe.md says what to do).
CLEAR_MESSAGE="Failed to fetch blobs because of a remote cache error"

# verdict FAULT RUN STATE PORT: records the build just made against the
# state's reference: completed with its bytes, failed clearly (fast, naming
# the endpoint or the remote cache error), or wrong.
declare -A RUNS_OF COMPLETED CLEAR WRONG SECS
verdict() {
  local fault=$1 run=$2 state=$3
  RUNS_OF[$fault]=$((${RUNS_OF[$fault]:-0} + 1))
  SECS[$fault]=$((${SECS[$fault]:-0} + B_SECONDS))
  if ((B_RC == 0)); then
    if [[ $B_SHA == "${REF[$state]}" ]]; then
      COMPLETED[$fault]=$((${COMPLETED[$fault]:-0} + 1))
      echo "$fault #$run: completed in ${B_SECONDS}s, the wheel byte-identical to the fault-free build's"
    else
      WRONG[$fault]=$((${WRONG[$fault]:-0} + 1))
      echo "$fault #$run: WRONG OUTPUT: wheel sha256 $B_SHA, the fault-free build's ${REF[$state]}" >&2
    fi
  elif ((B_SECONDS <= ${FAULT_FAIL_FAST:-120})) && grep -qE "127.0.0.1:$4|$CLEAR_MESSAGE" "$work/$fault-$run.log"; then
    CLEAR[$fault]=$((${CLEAR[$fault]:-0} + 1))
    echo "$fault #$run: failed in ${B_SECONDS}s (exit $B_RC): $(grep -m1 -oE "127.0.0.1:$4.*|$CLEAR_MESSAGE.{0,160}" "$work/$fault-$run.log")"
  else
    WRONG[$fault]=$((${WRONG[$fault]:-0} + 1))
    tail -20 "$work/$fault-$run.log" >&2
    echo "$fault #$run: FAILED UNCLEARLY (exit $B_RC after ${B_SECONDS}s)" >&2
  fi
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

# restart_buildgrid_on_upload: in the background, BuildGrid killed once the
# build has uploaded its first blob (mid-build: the uploads after it fail),
# then started again on the same port with the same storage.
restart_buildgrid_on_upload() {
  (
    local waited=0
    until [[ -n $(find "$objects" -type f -print -quit) ]] || ((waited > 600)); do
      sleep 0.2
      waited=$((waited + 1))
    done
    kill -KILL -- "-$E2E_BGD_PID" 2>/dev/null || true
    date +%s >"$work/bg/killed"
    sleep 3
    setsid "$E2E_VENV/bin/bgd" server start "$work/bg/buildgrid.yml" >>"$work/bg/buildgrid.log" 2>&1 &
    echo $! >"$work/bg/restarted.pid"
  ) &
  RESTARTER=$!
}

reference 0
reference 1
echo "--- fault-free local build: ${REF_SECONDS}s"

if wanted evicted; then
echo "--- evicted"
# The control: without eviction retries the same scenario fails, so it does
# lose an intermediate the build needs.
seed 0
e2e_bazel "$work/main" "$work/ob-t" clean >/dev/null 2>&1 || true
b evicted-control-hits t "${RC[@]}"
find "$objects" -type f -delete
source_state 1
b evicted-control t "${RC[@]}" --experimental_remote_cache_eviction_retries=0
((B_RC != 0)) && grep -q "do not exist remotely" "$work/evicted-control.log" ||
  fail "evicted, control: without eviction retries the build did not lose an intermediate (exit $B_RC)"
echo "evicted, control: without retries exit $B_RC, $(grep -o -m1 'Failed to fetch blobs because they do not exist remotely' "$work/evicted-control.log")"
for run in $(seq "$RUNS"); do
  seed 0
  e2e_bazel "$work/main" "$work/ob-t" clean >/dev/null 2>&1 || true
  b "evicted-hits-$run" t "${RC[@]}"
  ((B_RC == 0)) || fail "the cached build before eviction"
  find "$objects" -type f -delete
  source_state 1
  b "evicted-$run" t "${RC[@]}"
  verdict evicted "$run" 1 "$port"
done

fi
if wanted unreachable; then
echo "--- unreachable"
dead=$(e2e_free_port)
for run in $(seq "$RUNS"); do
  source_state 0
  e2e_bazel "$work/main" "$work/ob-t" clean >/dev/null 2>&1 || true
  b "unreachable-$run" t --config=remote-cache "--remote_cache=grpc://127.0.0.1:$dead"
  verdict unreachable "$run" 0 "$dead"
done

fi
if wanted restart; then
echo "--- restart"
for run in $(seq "$RUNS"); do
  find "$objects" -type f -delete
  source_state 0
  e2e_bazel "$work/main" "$work/ob-t" clean >/dev/null 2>&1 || true
  rm -f "$work/bg/killed"
  restart_buildgrid_on_upload
  b "restart-$run" t "${RC[@]}"
  [[ -f $work/bg/killed ]] && grep -q "WARNING: Remote Cache" "$work/restart-$run.log" ||
    fail "restart #$run: the build did not see the server go (a vacuous run)"
  wait "$RESTARTER" || true
  E2E_BGD_PID=$(cat "$work/bg/restarted.pid")
  E2E_GROUPS+=("$E2E_BGD_PID")
  e2e_wait_port "$E2E_BGD_PID" "$port" 60 || fail "BuildGrid did not come back on $port"
  verdict restart "$run" 0 "$port"
done

fi
if wanted corrupt-top; then
echo "--- corrupt-top"
for run in $(seq "$RUNS"); do
  seed 0
  corrupt "${REF[0]}"
  e2e_bazel "$work/main" "$work/ob-t" clean >/dev/null 2>&1 || true
  b "corrupt-top-$run" t "${RC[@]}"
  grep -q "does not match received digest" "$work/corrupt-top-$run.log" ||
    fail "corrupt-top #$run: the build never read the corrupted blob (a vacuous run)"
  verdict corrupt-top "$run" 0 "$port"
done

fi
if wanted corrupt-mid; then
echo "--- corrupt-mid"
for run in $(seq "$RUNS"); do
  # A cache without corrupt-top's bad wheel (a hit build would run that
  # action and fetch vadd.hip.pic.o's good bytes), and a fresh output base:
  # nothing of vadd.hip.pic.o's bytes outside the cache.
  find "$objects" -type f -delete
  seed 0
  b "corrupt-mid-hits-$run" "mid-$run" "${RC[@]}" --execution_log_json_file="$work/mid-$run.exec.json"
  # vadd.hip's object (its host code and offload bundle): an intermediate
  # the link after scale.hip's edit downloads.
  digest=$("$E2E_PY" - "$work/mid-$run.exec.json" <<'PY'
import json, sys
dec = json.JSONDecoder()
text = open(sys.argv[1]).read()
i = 0
while i < len(text):
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text):
        break
    s, i = dec.raw_decode(text, i)
    for o in s.get("actualOutputs", []):
        if o["path"].endswith("/vadd.hip.pic.o"):
            print(o["digest"]["hash"])
            sys.exit()
PY
)
  [[ -n $digest ]] || fail "no vadd.hip.pic.o in the execution log"
  corrupt "$digest"
  source_state 1
  b "corrupt-mid-$run" "mid-$run" "${RC[@]}"
  grep -q "does not match received digest" "$work/corrupt-mid-$run.log" ||
    fail "corrupt-mid #$run: the build never read the corrupted blob (a vacuous run)"
  verdict corrupt-mid "$run" 1 "$port"
done

fi

echo "fault | runs | completed | failed clearly | wrong outputs | time vs fault-free"
bad=0
for fault in $FAULTS; do
  n=${RUNS_OF[$fault]:-0}
  printf '%s | %d | %d | %d | %d | %sx\n' "$fault" "$n" "${COMPLETED[$fault]:-0}" "${CLEAR[$fault]:-0}" \
    "${WRONG[$fault]:-0}" "$(awk -v s="${SECS[$fault]:-0}" -v d="$((n * REF_SECONDS))" 'BEGIN { printf "%.1f", s / d }')"
  bad=$((bad + ${WRONG[$fault]:-0}))
done
((bad == 0)) || fail "$bad builds under faults gave a wrong wheel or failed without naming the endpoint"
echo "ok: every build under a fault completed with the fault-free bytes or failed clearly"

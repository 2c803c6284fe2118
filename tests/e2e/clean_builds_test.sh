#!/usr/bin/env bash
# Every from-scratch build of //:wheels that `make test` needs, done once.
# Two real REAPI servers on 127.0.0.1, BuildGrid as a cache, then BuildGrid
# with PostgreSQL and a buildbox worker (bubblewrap runner) as an executor;
# //:wheels built in this checkout, then in a copy of it at another path
# with its own output base:
#   A  this checkout, `bazel clean`, remote cache (empty server): every
#      action executes once, locally, and is uploaded. Its execution log
#      shows every Python-independent action ran exactly once, with
#      per-Python wheels for every interpreter on this machine and one pjrt
#      wheel.
#   B  copy, fresh output base, remote cache, --//:python_versions listed
#      in another order than A's (as a user lists them): hit rate >= 99 % of
#      cacheable spawns, no Rustc executed, the same tool and wheels; another
#      path, output base and list order, and still the same action keys
#   R  copy, `bazel clean`, --config=rbe with only the endpoint
#      overridden, empty execution server, //:example_wheels (//:wheels less
#      the real JAX plugin's third-party compiles) for one Python version
#      (per-Python configurations do not depend on the list, so its outputs
#      are among A's at the same paths): every spawn ran on the worker
#      (none a cache hit, every one on the RBE exec platform) but the
#      rules_rust-built tool's own compiles, which ran locally, also from
#      nothing; every output, the tool included, is byte-identical to A's:
#      re-created from nothing at another path and on a worker that sees
#      only the action's input root plus /usr and /etc (a cache hit would
#      hide an output that embeds the checkout path or the time; a HIP tool
#      that needs more than its inputs fails there)
#   W  copy, `bazel clean`, --config=rbe again: every spawn a remote cache hit
# and the negative controls (//tests/e2e/remote:leak_*) must FAIL the same checks:
# the checkout path in the environment (a cache miss in B) or in an output,
# and a timestamp (outputs that differ in R), an undeclared or host file
# (fails on the worker; the host one builds locally).
#
# Environment: CLEAN_BUILDS_TEST_TARGETS (default //:wheels),
# CLEAN_BUILDS_TEST_REMOTE_TARGETS (R and W; default //:example_wheels),
# CLEAN_BUILDS_TEST_REMOTE_PYTHONS (R and W's --//:python_versions; 3.13),
# CLEAN_BUILDS_TEST_MIN_HIT_RATE (0.99), CLEAN_BUILDS_TEST_TIMEOUT (s, 3000).
set -euo pipefail
source "$(dirname "$0")/remote/lib.sh"
source "$E2E_ROOT/tests/lib/pythons.sh"

read -r -a TARGETS <<<"${CLEAN_BUILDS_TEST_TARGETS:-//:wheels}"
# R and W, on the worker: the ruleset's own examples. //:wheels adds the real
# JAX plugin, whose third-party compiles (abseil, nanobind) are actions of
# the same kinds (rules_cc compiles, hip_library, python_extension links,
# wheels) and would double the cold remote build; A builds them cold.
read -r -a R_TARGETS <<<"${CLEAN_BUILDS_TEST_REMOTE_TARGETS:-//:example_wheels}"
# One Python on the worker: the other versions' actions are the same kinds,
# and each costs the worker's ~2.5x of a local compile. A proves the matrix.
R_PYTHONS=${CLEAN_BUILDS_TEST_REMOTE_PYTHONS:-3.13}
# The tool's own compiles run locally in R, from nothing at the other path
# all the same (the server is empty): what R proves of them is the same
# binary at another path, which needs no worker, and its ~110 spawns are
# most of what R would cost there (the worker's overhead per spawn). Users'
# builds compile no Rust: they take the tool prebuilt.
TOOL_LOCAL=(Rustc CargoBuildScriptRun)
MIN_HIT_RATE=${CLEAN_BUILDS_TEST_MIN_HIT_RATE:-0.99}
LEAKS=(//tests/e2e/remote:leak_output //tests/e2e/remote:leak_env //tests/e2e/remote:leak_time)
# The values buildbox-worker registers: what //platforms/rbe:rocm_linux_x86_64
# asks for.
PLATFORM=(OSFamily=Linux ISA=x86-64)

e2e_require_tools
e2e_deadline "${CLEAN_BUILDS_TEST_TIMEOUT:-3000}"

# What the machine has, listed independently of the declared versions and
# the local-runtime registration; the matrix users need (3.11-3.14) must be
# among it.
mapfile -t versions < <(expected_python_versions)
echo "Python versions on this machine: ${versions[*]}"
for v in 3.11 3.12 3.13 3.14; do
  [[ " ${versions[*]} " == *" $v "* ]] || fail "no Python $v with headers on this machine (make setup)"
done

mkdir -p "$E2E_TMP"
RUN=$(mktemp -d "$E2E_TMP/clean-builds.XXXXXX")
COPY=$RUN/copy-$RANDOM/rules_rocm_copy
OB2=$RUN/ob-copy
ok=0
cleanup() {
  e2e_stop_services
  [[ -d $OB2 ]] && (cd / && timeout 300 "$BAZEL" --output_base="$OB2" clean --expunge >/dev/null 2>&1 9>&- || true)
  e2e_shutdown_servers
  # Bazel leaves read-only directories when --expunge did not finish.
  [[ -d $OB2 ]] && chmod -R u+w "$OB2" 2>/dev/null
  if ((ok)); then
    rm -rf "$RUN"
    rmdir "$E2E_TMP" 2>/dev/null || true
  else
    # The logs only: CAS, database and worker caches are large.
    rm -rf "$COPY" "$OB2" "$RUN"/disk-a "$RUN"/cas* "$RUN"/rbe/cas "$RUN"/rbe/pg "$RUN"/rbe/casd
    echo "clean_builds_test: logs kept in $RUN (*.log, *.exec.json; rbe/: buildgrid, worker, casd, postgres)" >&2
  fi
}
e2e_traps cleanup

e2e_start_buildgrid "$RUN"
REMOTE=(--config=remote-cache "--remote_cache=grpc://127.0.0.1:$E2E_CACHE_PORT")

# A: reference build in this checkout. `bazel clean` drops the outputs and
# the local action cache, so every action (the Rustc ones of the tool among
# them) executes and is uploaded to the empty server.
# Its own empty disk cache: the shared one would answer (Bazel reads a disk
# cache even with --noremote_accept_cached); donated to the later tests'
# builds once A has passed.
e2e_bazel "$E2E_ROOT" "$E2E_MAIN_OB" clean >/dev/null 2>&1
A_FLAGS=("${REMOTE[@]}" --disk_cache="$RUN/disk-a")
e2e_build "$RUN" A "$E2E_ROOT" "$E2E_MAIN_OB" "${A_FLAGS[@]}" "${TARGETS[@]}"
e2e_check "$RUN" A A --max-hit-rate 0 # both caches started empty
# With the build's own flags: other options discard the analysis, and
# without the cache B would compile the tool again instead of fetching it.
tool_a=$(e2e_tool_sha "$E2E_ROOT" "$E2E_MAIN_OB" "${A_FLAGS[@]}")

if [[ ${TARGETS[*]} == //:wheels ]]; then
  # Python-independent actions once, from A's execution log.
  "$E2E_PY" "$E2E_ROOT/tests/lib/exec_log_once.py" "$RUN/A.exec.json" "${versions[@]}" ||
    fail "a Python-independent action of //:wheels ran more than once (A's execution log)"
  # The wheels: one per version per per-Python distribution, one pjrt.
  # After `bazel clean` every wheel under bazel-out is from A.
  out=$(e2e_bazel "$E2E_ROOT" "$E2E_MAIN_OB" info "${REMOTE[@]}" output_path 2>/dev/null)
  mapfile -t wheels < <(find "$out" -name '*.whl' | sort)
  for dist in example_jaxlib example_rocm_plugin jax_rocm7_plugin; do
    for v in "${versions[@]}"; do
      # 3.14t: cp314-cp314t.
      py=${v%t}
      tag="cp${py/./}-cp${v/./}-manylinux_2_[0-9]+_x86_64"
      n=$(printf '%s\n' "${wheels[@]}" | grep -cE "/${dist}-[^/]*-${tag}\.whl$" || true)
      [[ $n == 1 ]] || fail "$n ${dist} wheels tagged $tag in ${wheels[*]}"
    done
  done
  n=$(printf '%s\n' "${wheels[@]}" | grep -c '/example_rocm7_pjrt-[^/]*\.whl$' || true)
  [[ $n == 1 ]] || fail "$n example_rocm7_pjrt wheels in ${wheels[*]}"
  echo "A: ${#wheels[@]} wheels, one per Python version and distribution, one pjrt"
fi
donate_disk_cache "$RUN/disk-a"
rm -rf "$RUN/disk-a"

e2e_build "$RUN" A_leak "$E2E_ROOT" "$E2E_MAIN_OB" "${REMOTE[@]}" \
  --action_env=RULES_ROCM_E2E_CHECKOUT="$E2E_ROOT" "${LEAKS[@]}"

# The copy: another path, another directory name, not a git worktree.
e2e_copy_checkout "$COPY"

# B: fresh output base at the other path, the Python versions listed in
# another order (rules_rocm's discovery gave A's), cache hits expected.
reordered=$(printf '%s\n' "${versions[@]}" | sort -r -V | paste -sd, -)
B_FLAGS=("${REMOTE[@]}" "--//:python_versions=$reordered")
e2e_build "$RUN" B "$COPY" "$OB2" "${B_FLAGS[@]}" "${TARGETS[@]}"
tool_b=$(e2e_tool_sha "$COPY" "$OB2" "${B_FLAGS[@]}")
[[ $tool_a == "$tool_b" ]] ||
  fail "the rules_rust-built rocm-wheel differs between checkouts ($tool_a vs $tool_b): it is an input of every wheel action, so nothing can hit the cache"
echo "rocm-wheel binary identical in both checkouts: $tool_a"
# The tool itself came from the cache: B compiled no Rust.
"$E2E_PY" - "$RUN/A.exec.json" "$RUN/B.exec.json" "$E2E_ROOT/tests/lib" <<'PY' || fail "B compiled rocm-wheel's crates instead of taking them from the remote cache"
import sys
sys.path.insert(0, sys.argv[3])
from exec_log import read_spawns
a = [s for s in read_spawns(sys.argv[1]) if s.get("mnemonic") == "Rustc"]
b = [s for s in read_spawns(sys.argv[2]) if s.get("mnemonic") == "Rustc"]
local = [s for s in b if not s.get("cacheHit")]
print(f"Rustc spawns: A {len(a)}, B {len(b)} of which executed locally: {len(local)}")
for s in local:
    print("  executed:", s.get("progressMessage", s.get("targetLabel")))
sys.exit(0 if a and len(b) == len(a) and not local else 1)
PY
e2e_check "$RUN" A B --min-hit-rate "$MIN_HIT_RATE"
e2e_build "$RUN" B_leak "$COPY" "$OB2" "${REMOTE[@]}" \
  --action_env=RULES_ROCM_E2E_CHECKOUT="$COPY" "${LEAKS[@]}"

# R: everything from scratch at the other path, on the worker: the
# execution server starts empty, and `bazel clean` drops every output (the
# external repositories were made anew at this path by B's fresh output
# base, and B's cache hits show they give the same action keys).
e2e_stop_buildgrid
mkdir -p "$RUN/rbe"
e2e_start_postgres "$RUN/rbe"
e2e_start_buildgrid "$RUN/rbe" "$E2E_ROOT/tests/e2e/remote/buildgrid-rbe.yml.in" "s|@SQL@|$E2E_PG_URL|"
e2e_start_worker "$RUN/rbe" "$E2E_CACHE_PORT" "${PLATFORM[@]}"
RBE=(--config=rbe "--remote_executor=grpc://127.0.0.1:$E2E_CACHE_PORT")
R_FLAGS=("${RBE[@]}" "--//:python_versions=$R_PYTHONS")
R_RUNNERS=()
for m in "${TOOL_LOCAL[@]}"; do
  R_FLAGS+=("--strategy=$m=processwrapper-sandbox")
  R_RUNNERS+=(--runner-for "$m=processwrapper-sandbox")
done
e2e_bazel "$COPY" "$OB2" clean >/dev/null 2>&1
start=$SECONDS
e2e_build "$RUN" R "$COPY" "$OB2" "${R_FLAGS[@]}" "${R_TARGETS[@]}"
echo "R (cold remote, other path) took $((SECONDS - start)) s"
e2e_check "$RUN" A R --max-hit-rate 0 --require-runner remote "${R_RUNNERS[@]}" \
  --require-exec-property OSFamily --subset
tool_r=$(e2e_tool_sha "$COPY" "$OB2" "${R_FLAGS[@]}")
[[ $tool_a == "$tool_r" ]] ||
  fail "the rules_rust-built rocm-wheel differs when built from nothing at another path ($tool_a vs $tool_r): its Rustc actions are not deterministic"
echo "rocm-wheel binary identical when built from nothing at another path: $tool_r"
e2e_build "$RUN" R_leak "$COPY" "$OB2" "${RBE[@]}" \
  --action_env=RULES_ROCM_E2E_CHECKOUT="$COPY" "${LEAKS[@]}"

# W: the same again from the warm remote cache.
e2e_bazel "$COPY" "$OB2" clean >/dev/null 2>&1
start=$SECONDS
e2e_build "$RUN" W "$COPY" "$OB2" "${R_FLAGS[@]}" "${R_TARGETS[@]}"
echo "W (warm remote cache) took $((SECONDS - start)) s"
e2e_check "$RUN" A W --min-hit-rate 1 --require-runner "remote cache hit" --subset

# Negative controls through the very same steps and checks: all must fail.
expect_caught() {
  local cand=$1
  shift
  if e2e_check "$RUN" A_leak "$cand" "$@" >"$RUN/$cand.check" 2>&1; then
    cat "$RUN/$cand.check"
    fail "the check passed on a non-hermetic action: it cannot detect what it is meant to"
  fi
  cat "$RUN/$cand.check"
}
expect_caught B_leak --min-hit-rate "$MIN_HIT_RATE"
grep -q 'MISS NonHermetic -> .*/leak_env.txt' "$RUN/B_leak.check" ||
  fail "B_leak: the checkout path in leak_env's environment was not reported as a cache miss"
grep -q 'env RULES_ROCM_E2E_CHECKOUT' "$RUN/B_leak.check" ||
  fail "B_leak: the miss was not explained by the environment variable that differs"
expect_caught R_leak --max-hit-rate 0
grep -q 'DIFF NonHermetic -> .*/leak_output.txt' "$RUN/R_leak.check" ||
  fail "R_leak: leak_output (checkout path in its output only) was not reported as differing"
grep -q 'DIFF NonHermetic -> .*/leak_time.txt' "$RUN/R_leak.check" ||
  fail "R_leak: the timestamp in leak_time.txt was not reported as differing"
# The worker shows an action only its input root (plus /usr and /etc):
# reading the checkout by its host path, or a file beside an input, fails
# there (remote first: a local result must not be what the build finds).
for leak in leak_host_path leak_undeclared; do
  expect_failure "$RUN/$leak.log" e2e_bazel "$COPY" "$OB2" build "${RBE[@]}" --disk_cache= "//tests/e2e/remote:$leak"
  expect_in "$RUN/$leak.log" "BUILD.bazel: No such file or directory"
done
# ... while the local sandbox lets leak_host_path read the checkout: what
# fails remotely is the worker's isolation.
e2e_build "$RUN" leak_local "$COPY" "$OB2" "${E2E_LOCAL_FLAGS[@]}" //tests/e2e/remote:leak_host_path
echo "negative controls caught: leak_env (cache miss), leak_output and leak_time (outputs differ), leak_host_path and leak_undeclared (fail on the worker)"

ok=1
echo "clean_builds_test: PASS"

#!/usr/bin/env bash
# Remote execution for real: PostgreSQL, BuildGrid (execution service),
# buildbox-casd and buildbox-worker (bubblewrap runner) on 127.0.0.1, all
# started here and stopped on every exit. In this checkout's output base:
#   L  local build of the targets (the reference; a no-op when `make
#      bazel-test` already built them: only their wheels are compared then)
#   R  `bazel clean`, --config=rbe with only the endpoint overridden, empty
#      server: every spawn ran on the worker (none locally, none a cache
#      hit), and the wheels are byte-identical to L's. The worker shows an
#      action only its input root plus /usr and /etc: a HIP tool that needs
#      more than its inputs (a symlink to the compiler) fails here.
#   W  `bazel clean`, --config=rbe again: every spawn is a remote cache hit
#      (the remote-cache-warm rebuild), same wheels
#   S  a copy of the checkout at another path, fresh output base,
#      --config=rbe: every spawn is a remote cache hit (nothing in an action
#      key depends on where the checkout is), same wheels
# Negative controls: //tests/remote:leak_host_path (reads the checkout by
# its absolute path) builds locally but must fail on the worker;
# //tests/remote:leak_undeclared (reads a file beside its input) must fail.
#
# Environment: RBE_TEST_TARGETS (default //:wheels), RBE_TEST_TIMEOUT (s,
# 2400).
set -euo pipefail
source "$(dirname "$0")/../remote/lib.sh"

read -r -a TARGETS <<<"${RBE_TEST_TARGETS:-//:wheels}"
# The values buildbox-worker registers: what //platforms/rbe:rocm_linux_x86_64
# asks for.
PLATFORM=(OSFamily=Linux ISA=x86-64)

e2e_require_tools
e2e_deadline "${RBE_TEST_TIMEOUT:-2400}"
mkdir -p "$E2E_TMP"
RUN=$(mktemp -d "$E2E_TMP/rbe.XXXXXX")
ok=0
cleanup() {
  e2e_stop_services
  e2e_shutdown_servers
  if ((ok)); then
    rm -rf "$RUN"
    rmdir "$E2E_TMP" 2>/dev/null || true
  else
    # The logs only: CAS, database and worker caches are large.
    rm -rf "$RUN/cas" "$RUN/pg" "$RUN/casd" "$RUN"/copy-* "$RUN/ob-copy"
    echo "remote_execution_test: logs kept in $RUN (buildgrid.log, worker.log, casd.log, postgres.log, *.log)" >&2
  fi
}
e2e_traps cleanup

e2e_start_postgres "$RUN"
e2e_start_buildgrid "$RUN" "$E2E_ROOT/tests/remote/buildgrid-rbe.yml.in" "s|@SQL@|$E2E_PG_URL|"
e2e_start_worker "$RUN" "$E2E_CACHE_PORT" "${PLATFORM[@]}"
RBE=(--config=rbe "--remote_executor=grpc://127.0.0.1:$E2E_CACHE_PORT")

# L: the local reference.
e2e_build "$RUN" L "$E2E_ROOT" "$E2E_MAIN_OB" "${E2E_LOCAL_FLAGS[@]}" "${TARGETS[@]}"

# R: every action on the worker.
e2e_bazel "$E2E_ROOT" "$E2E_MAIN_OB" clean >/dev/null 2>&1
start=$SECONDS
e2e_build "$RUN" R "$E2E_ROOT" "$E2E_MAIN_OB" "${RBE[@]}" "${TARGETS[@]}"
echo "R (cold remote) took $((SECONDS - start)) s"
e2e_check "$RUN" L R --max-hit-rate 0 --require-runner remote --require-exec-property OSFamily

# W: the same again from a warm remote cache.
e2e_bazel "$E2E_ROOT" "$E2E_MAIN_OB" clean >/dev/null 2>&1
start=$SECONDS
e2e_build "$RUN" W "$E2E_ROOT" "$E2E_MAIN_OB" "${RBE[@]}" "${TARGETS[@]}"
echo "W (warm remote cache) took $((SECONDS - start)) s"
e2e_check "$RUN" L W --min-hit-rate 1 --require-runner "remote cache hit"

# S: a second checkout at another path (not a worktree), its own output base.
COPY=$RUN/copy-$RANDOM/rules_rocm_copy
e2e_copy_checkout "$COPY"
start=$SECONDS
e2e_build "$RUN" S "$COPY" "$RUN/ob-copy" "${RBE[@]}" "${TARGETS[@]}"
echo "S (second checkout, warm remote cache) took $((SECONDS - start)) s"
e2e_check "$RUN" L S --min-hit-rate 1 --require-runner "remote cache hit"

# Negative controls: they must fail on the worker (remote first: a local
# result must not be what the second build finds), and leak_host_path must
# work locally, so what fails remotely is the worker's isolation.
for leak in leak_host_path leak_undeclared; do
  if e2e_bazel "$E2E_ROOT" "$E2E_MAIN_OB" build "${RBE[@]}" --disk_cache= "//tests/remote:$leak" \
    >"$RUN/$leak.log" 2>&1; then
    cat "$RUN/$leak.log"
    fail "//tests/remote:$leak built on the worker: the worker sees more than the action's input root"
  fi
  grep -q "BUILD.bazel: No such file or directory" "$RUN/$leak.log" ||
    { tail -20 "$RUN/$leak.log" >&2; fail "//tests/remote:$leak failed, but not for reading its undeclared file; see $RUN/$leak.log"; }
  echo "negative control $leak: failed on the worker, as it must"
done
e2e_build "$RUN" leak_local "$E2E_ROOT" "$E2E_MAIN_OB" "${E2E_LOCAL_FLAGS[@]}" //tests/remote:leak_host_path
echo "negative control leak_host_path: builds locally (the local sandbox lets it read the checkout)"

ok=1
echo "remote_execution_test: PASS"

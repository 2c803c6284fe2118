#!/usr/bin/env bash
# run_all.sh [TEST...]: runs the given tests, by default every
# tests/e2e/*_test.sh (tests that drive bazel itself: aquery, execution
# logs, flag changes, clean builds). Stops at the first failure;
# prints each test's time at the end (and appends it to $CI_TIMES when set:
# .ci/run's per-step report).
set -euo pipefail
cd "$(dirname "$0")/../.."
shopt -s nullglob
tests=("$@")
((${#tests[@]})) || tests=(tests/e2e/*_test.sh)
# No test found is a broken checkout, not a pass.
((${#tests[@]})) || { echo "FAIL: no tests/e2e/*_test.sh in $PWD" >&2; exit 1; }
for t in "${tests[@]}"; do
  [[ -f $t ]] || { echo "FAIL: no e2e test $t" >&2; exit 1; }
done
times=()
report() {
  local line
  echo "=== e2e times:"
  for line in "${times[@]}"; do
    echo "$line"
    [[ -z ${CI_TIMES:-} ]] || echo "$line" >>"$CI_TIMES"
  done
}
trap report EXIT
for t in "${tests[@]}"; do
  echo "=== $t"
  start=$SECONDS
  rc=0
  bash "$t" || rc=$?
  times+=("$(printf '%6d s    %s%s' $((SECONDS - start)) "$t" "$( ((rc)) && echo " FAILED ($rc)")")")
  ((rc == 0)) || exit "$rc"
  echo "=== $t: PASS ($((SECONDS - start)) s)"
done
echo "=== ${#tests[@]} e2e tests: PASS"

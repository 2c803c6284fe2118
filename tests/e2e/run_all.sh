#!/usr/bin/env bash
# Runs every tests/e2e/*_test.sh (tests that drive bazel itself: aquery,
# execution logs, flag changes, clean builds). Stops at the first failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
shopt -s nullglob
tests=(tests/e2e/*_test.sh)
# No test found is a broken checkout, not a pass.
((${#tests[@]})) || { echo "FAIL: no tests/e2e/*_test.sh in $PWD" >&2; exit 1; }
for t in "${tests[@]}"; do
  echo "=== $t"
  start=$SECONDS
  bash "$t"
  echo "=== $t: PASS ($((SECONDS - start)) s)"
done
echo "=== ${#tests[@]} e2e tests: PASS"

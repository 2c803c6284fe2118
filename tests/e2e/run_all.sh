#!/usr/bin/env bash
# Runs every tests/e2e/*_test.sh (tests that drive bazel itself: aquery,
# execution logs, flag changes, clean builds). Stops at the first failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
for t in tests/e2e/*_test.sh; do
  [[ -e $t ]] || continue
  echo "=== $t"
  start=$SECONDS
  bash "$t"
  echo "=== $t: PASS ($((SECONDS - start)) s)"
done

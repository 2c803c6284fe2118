#!/usr/bin/env bash
# The remote faults of tests/e2e/remote/faults_test.sh on the whole
# //:wheels, in a copy of the checkout (its own output bases), against the
# fault-free local build of the same sources in the same run (the anchor).
#
#   scripts/buildroot bench/remote_faults/run.sh      (inside the build root)
#   [BENCH_FAULTS="evicted gone ..."] [BENCH_RUNS=1]
#
# Each cache fault meets an incremental build (FAULT_WARM=1): one cold
# build fills the cache, then every fault starts from an output base of its
# hits and builds an edit of examples/pjrt/kernels/vector_add.hip; the
# intermediate corrupted is radix_sort.hip's object, which the link after
# that edit needs. rbe-restart executes //:wheels from nothing on one local
# worker, so it is not in the default set. No controls (the test has them).
# Prints the table (results go to bench/remote_faults/README.md and
# docs/benchmarks.md) and keeps its log, every build's log and --explain
# file (why each action ran) in bench/out/remote_faults/.
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf bench/out/remote_faults
mkdir -p bench/out/remote_faults
echo "//:wheels under remote faults, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
FAULT_CHECKOUT=1 FAULT_WARM=1 FAULT_TARGETS=//:wheels FAULT_LOGS=$PWD/bench/out/remote_faults/builds \
  FAULT_EDIT=examples/pjrt/kernels/vector_add.hip FAULT_MID=/radix_sort.hip.pic.o \
  FAULT_RUNS=${BENCH_RUNS:-1} FAULT_CONTROLS=0 FAULT_BACKGROUND=0 FAULT_TEST_TIMEOUT=${BENCH_TIMEOUT:-7200} FAULT_FAIL_FAST=300 \
  FAULTS=${BENCH_FAULTS:-evicted gone unreachable restart corrupt-top corrupt-mid slow dropping rbe-unreachable} \
  tests/e2e/remote/faults_test.sh 2>&1 | tee bench/out/remote_faults/run.log
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

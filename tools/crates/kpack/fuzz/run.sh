#!/usr/bin/env bash
# run.sh [SECONDS] [TARGET...]: builds the fuzz targets the way cargo-fuzz
# does (coverage instrumentation, libFuzzer from libfuzzer-sys) with the
# system rustc (RUSTC_BOOTSTRAP for its -C passes; no nightly, no
# cargo-fuzz), then runs each target SECONDS (default 60) over a scratch
# copy of its committed corpus. A crash (a broken promise panics), an input
# over the time limit or over the memory limit fails the run, and the input
# (crash-*, timeout-*, oom-*) is kept in FUZZ_ARTIFACTS (default: here).
# Run it in the build root:
#   scripts/buildroot tools/crates/kpack/fuzz/run.sh 60
# run.sh --controls: the negative controls. Each planted fault
# (KPACK_FUZZ_PLANT, src/lib.rs) must fail a target's run and leave its
# kind of input; the run succeeds only if all three do.
# FUZZ_PROFILE=smoke builds with the fuzz crate's `smoke` profile
# (quicker to build, slower to run) instead of release;
# FUZZ_JOBS=N runs N targets at a time (default 1).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
controls=0
[[ ${1:-} != --controls ]] || { controls=1; shift; }
seconds=${1:-60}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(archive marker host device_wheel)
profile=${FUZZ_PROFILE:-release}
jobs=${FUZZ_JOBS:-1}
artifacts=${FUZZ_ARTIFACTS:-$here}
target_dir=${CARGO_TARGET_DIR:-$HOME/.cache/rules_rocm/cargo-target-kpack-fuzz}
triple=x86_64-unknown-linux-gnu
RUSTC_BOOTSTRAP=1 RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks" \
  cargo build --profile "$profile" --locked --manifest-path "$here/Cargo.toml" --target "$triple" --target-dir "$target_dir"
scratch=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$scratch"' EXIT
# Runs target $1 for $2 seconds, with libFuzzer's time limit $3 (in the
# background when FUZZ_JOBS > 1); its log and inputs in $scratch.
fuzz() {
  local t=$1
  mkdir -p "$scratch/$t.work"
  cp -r "$here/corpus/$t" "$scratch/$t"
  (cd "$scratch/$t.work" && "$target_dir/$triple/$profile/$t" "$scratch/$t" -max_total_time="$2" \
    -rss_limit_mb=512 -timeout="$3" -max_len=65536 -print_final_stats=1 2>"$scratch/$t.log")
}
# The inputs libFuzzer kept from target $1's run, copied to $artifacts.
keep() {
  local kept
  kept=$(cd "$scratch/$1.work" && ls crash-* timeout-* oom-* 2>/dev/null || true)
  [[ -z $kept ]] || (cd "$scratch/$1.work" && mkdir -p "$artifacts" && cp $kept "$artifacts/")
  echo "$kept"
}
if ((controls)); then
  for plant in promise:crash timeout:timeout oom:oom; do
    t=${targets[0]}
    rm -rf "${scratch:?}/$t" "$scratch/$t.work"
    if KPACK_FUZZ_PLANT=${plant%%:*} fuzz "$t" 20 2; then
      echo "run.sh: control ${plant%%:*}: $t ran clean with the fault planted" >&2
      exit 1
    fi
    kept=$(artifacts=$scratch/kept keep "$t")
    [[ $kept == "${plant##*:}"-* ]] || {
      tail -20 "$scratch/$t.log" >&2
      echo "run.sh: control ${plant%%:*}: $t failed but kept '${kept}', not ${plant##*:}-*" >&2
      exit 1
    }
    echo "run.sh: control ${plant%%:*}: $t failed and kept $kept"
  done
  exit 0
fi
# Waits for target $1's run; a crash, timeout or oom fails the script.
verdict() {
  local t=$1 pid=$2
  wait "$pid" || {
    tail -30 "$scratch/$t.log" >&2
    echo "run.sh: $t failed; the input is in $artifacts: $(keep "$t")" >&2
    exit 1
  }
  echo "run.sh: $t: $(grep -o 'Done [0-9]* runs' "$scratch/$t.log") in ${seconds}s, no crash"
}
running=()
for t in "${targets[@]}"; do
  fuzz "$t" "$seconds" 10 &
  running+=("$t:$!")
  if ((${#running[@]} >= jobs)); then
    verdict "${running[0]%%:*}" "${running[0]##*:}"
    running=("${running[@]:1}")
  fi
done
for r in "${running[@]}"; do
  verdict "${r%%:*}" "${r##*:}"
done

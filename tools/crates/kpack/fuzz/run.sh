#!/usr/bin/env bash
# run.sh [SECONDS] [TARGET...]: builds the fuzz targets the way cargo-fuzz
# does (coverage instrumentation, libFuzzer from libfuzzer-sys) with the
# system rustc (RUSTC_BOOTSTRAP for its -C passes; no nightly, no
# cargo-fuzz), then runs each target SECONDS (default 60) over a scratch
# copy of its committed corpus. A crash leaves crash-* in the scratch
# directory and fails the run. Run it in the build root:
#   scripts/buildroot tools/crates/kpack/fuzz/run.sh 60
# FUZZ_PROFILE=smoke builds with the fuzz crate's `smoke` profile
# (opt-level 1: quicker to build, slower to run) instead of release;
# FUZZ_JOBS=N runs N targets at a time (default 1).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
seconds=${1:-60}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(archive marker host device_wheel)
profile=${FUZZ_PROFILE:-release}
jobs=${FUZZ_JOBS:-1}
target_dir=${CARGO_TARGET_DIR:-$HOME/.cache/rules_rocm/cargo-target-kpack-fuzz}
triple=x86_64-unknown-linux-gnu
RUSTC_BOOTSTRAP=1 RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks" \
  cargo build --profile "$profile" --locked --manifest-path "$here/Cargo.toml" --target "$triple" --target-dir "$target_dir"
scratch=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$scratch"' EXIT
# Runs target $1 (in the background when FUZZ_JOBS > 1); its log in $scratch.
fuzz() {
  local t=$1
  mkdir -p "$scratch/$t.work"
  cp -r "$here/corpus/$t" "$scratch/$t"
  (cd "$scratch/$t.work" && "$target_dir/$triple/$profile/$t" "$scratch/$t" -max_total_time="$seconds" \
    -rss_limit_mb=512 -timeout=10 -max_len=65536 -print_final_stats=1 2>"$scratch/$t.log")
}
# Waits for target $1's run; a crash fails the script.
verdict() {
  local t=$1 pid=$2
  wait "$pid" || {
    tail -30 "$scratch/$t.log" >&2
    cp "$scratch/$t.work"/crash-* "$here/" 2>/dev/null || true
    echo "run.sh: $t crashed; the input is in $here/crash-*" >&2
    exit 1
  }
  echo "run.sh: $t: $(grep -o 'Done [0-9]* runs' "$scratch/$t.log") in ${seconds}s, no crash"
}
running=()
for t in "${targets[@]}"; do
  fuzz "$t" &
  running+=("$t:$!")
  if ((${#running[@]} >= jobs)); then
    verdict "${running[0]%%:*}" "${running[0]##*:}"
    running=("${running[@]:1}")
  fi
done
for r in "${running[@]}"; do
  verdict "${r%%:*}" "${r##*:}"
done

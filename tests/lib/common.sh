# Sourced by e2e scripts: the helpers every one of them needs.

# fail MESSAGE...: report and stop the test.
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# expect_build_failure LOG BAZEL_ARGS...: the build must fail; its output goes to LOG.
expect_build_failure() {
  local log=$1
  shift
  if "${BAZEL:-bazel}" build "$@" >"$log" 2>&1; then
    fail "bazel build $* succeeded; it must fail"
  fi
}

# expect_in LOG NEEDLE...: every needle occurs in LOG (fixed strings).
expect_in() {
  local log=$1 needle
  shift
  for needle in "$@"; do
    grep -qF -- "$needle" "$log" || {
      tail -40 "$log" >&2
      fail "$log lacks: $needle"
    }
  done
}

# llvm_bin: the newest /usr/lib/llvm-<N>/bin with a clang (Debian's clang-<N>,
# lld-<N>, llvm-<N>), the build root's compiler.
llvm_bin() {
  local d best="" n max=-1
  for d in /usr/lib/llvm-*/bin; do
    n=${d#/usr/lib/llvm-}
    n=${n%/bin}
    [[ $n =~ ^[0-9]+$ && -x $d/clang ]] || continue
    ((n > max)) && max=$n best=$d
  done
  [[ -n $best ]] || fail "no /usr/lib/llvm-<N>/bin/clang: run inside scripts/buildroot"
  echo "$best"
}

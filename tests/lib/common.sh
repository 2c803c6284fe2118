# Sourced by e2e scripts: the helpers every one of them needs.

# Checked-in files of scratch modules and fixtures (tests/e2e/fixtures).
RULES_ROCM_FIXTURES=$(cd "$(dirname "${BASH_SOURCE[0]}")/../e2e/fixtures" && pwd)

# fail MESSAGE...: report and stop the test.
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# require_tools PATH...: each is an executable, else how to get it.
require_tools() {
  local t
  for t in "$@"; do
    [[ -x $t ]] || fail "$t missing (run make setup; run inside scripts/buildroot)"
  done
}

# bz ARGS...: Bazel (${BAZEL:-bazel}), on the script's own output base when
# it sets $ob (a scratch module's, kept apart from the checkout's server).
bz() {
  if [[ -n ${ob:-} ]]; then
    "${BAZEL:-bazel}" --output_base="$ob" "$@"
  else
    "${BAZEL:-bazel}" "$@"
  fi
}

# expect_failure LOG COMMAND...: COMMAND must fail; its output goes to LOG.
expect_failure() {
  local log=$1
  shift
  if "$@" >"$log" 2>&1; then
    fail "$* succeeded; it must fail"
  fi
}

# expect_build_failure LOG BAZEL_ARGS...: `bz build` must fail; its output goes to LOG.
expect_build_failure() {
  local log=$1
  shift
  expect_failure "$log" bz build "$@"
}

# expect_grep GREP_FLAG WHAT LOG PATTERN...: every pattern is found in LOG
# by `grep GREP_FLAG` (-F fixed strings, -E extended regexps); else LOG's
# tail and "LOG WHAT: PATTERN".
expect_grep() {
  local flag=$1 what=$2 log=$3 pattern
  shift 3
  for pattern in "$@"; do
    grep -q "$flag" -- "$pattern" "$log" || {
      tail -40 "$log" >&2
      fail "$log $what: $pattern"
    }
  done
}

# for_this_cpu WHEEL: whether WHEEL installs on this machine's CPU (a pure
# wheel, or one tagged for `uname -m`; not the aarch64 tool wheel on x86_64).
for_this_cpu() { [[ $1 == *-any.whl || $1 == *_"$(uname -m)".whl ]]; }

# expect_in LOG NEEDLE...: every needle occurs in LOG (fixed strings).
expect_in() { expect_grep -F lacks "$@"; }

# expect_match LOG REGEX...: every extended regular expression matches LOG.
expect_match() { expect_grep -E "does not match" "$@"; }

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

# shared_disk_cache: flags for the disk cache shared by the builds that do
# not test a cold build (the Makefile's DISK_CACHE, passed as
# $RULES_ROCM_DISK_CACHE: `bazel test //...` and the e2e tests that use their
# own output base), bounded in size (the Makefile's DISK_CACHE_MAX, which
# says why so large).
shared_disk_cache() {
  echo "--disk_cache=$(shared_disk_cache_dir) --experimental_disk_cache_gc_max_size=${RULES_ROCM_DISK_CACHE_MAX:-16G}"
}
shared_disk_cache_dir() {
  echo "${RULES_ROCM_DISK_CACHE:-$HOME/.cache/rules_rocm/e2e-disk-cache}"
}

# donate_disk_cache DIR: copies the entries of the disk cache DIR that the
# shared one lacks into it. A cold build cannot read the shared cache (Bazel
# reads a disk cache even with --noremote_accept_cached), so it writes its own
# and gives the results to the builds after it. Entries are content-addressed
# (cas/) or keyed by the action (ac/): an existing one is never replaced.
donate_disk_cache() {
  local src=$1 dst d
  dst=$(shared_disk_cache_dir)
  for d in ac cas; do
    [[ -d $src/$d ]] || continue
    mkdir -p "$dst/$d"
    # Fresh timestamps: the shared cache evicts the least recently used
    # entries first, and these were just produced.
    cp -r -n "$src/$d/." "$dst/$d/"
  done
}

# serve_directory DIR LOG: serves DIR over HTTP on 127.0.0.1 (a free port) in
# the background; prints "PID PORT". Only the loopback interface listens.
serve_directory() {
  serve_with "$2" python3 -u -m http.server --bind 127.0.0.1 --directory "$1" 0
}

# serve_with LOG COMMAND...: runs an HTTP server in the background, its
# output in LOG, until it says "Serving HTTP on 127.0.0.1 port N" (as
# http.server does); prints "PID PORT".
serve_with() {
  local log=$1 pid port="" i
  shift
  "$@" >"$log" 2>&1 9>&- &
  pid=$!
  for i in $(seq 1 100); do
    port=$(sed -n 's/^Serving HTTP on 127\.0\.0\.1 port \([0-9]*\).*/\1/p' "$log")
    [[ -n $port ]] && break
    sleep 0.1
  done
  [[ -n $port ]] || fail "$* did not start: $(cat "$log")"
  echo "$pid $port"
}

# fixture FILE [KEY=VALUE...]: prints tests/e2e/fixtures/FILE with each
# @KEY@ replaced by VALUE; a placeholder left over (a typo here or in the
# fixture) fails the test instead of reaching Bazel.
fixture() {
  local file=$RULES_ROCM_FIXTURES/$1 text kv left
  [[ -f $file ]] || fail "no fixture $1 in $RULES_ROCM_FIXTURES"
  shift
  text=$(cat "$file") || fail "cannot read fixture $file"
  for kv in "$@"; do
    text=${text//@${kv%%=*}@/${kv#*=}}
  done
  left=$(grep -oE '@[A-Z][A-Z0-9_]*@' <<<"$text" | sort -u | tr '\n' ' ') || true
  [[ -z $left ]] || fail "fixture $file: no value for ${left% }"
  printf '%s\n' "$text"
}

# fixture_copy DIR DEST: the fixture folder DIR's files into DEST (merged).
fixture_copy() {
  [[ -d $RULES_ROCM_FIXTURES/$1 ]] || fail "no fixture folder $1 in $RULES_ROCM_FIXTURES"
  mkdir -p "$2"
  cp -R "$RULES_ROCM_FIXTURES/$1/." "$2/"
}

# scratch_module NAME ROOT: writes MODULE.bazel and .bazelrc of a downstream
# module NAME in the current directory, using the rules_rocm checkout at ROOT
# (local_path_override); callers append their own lines to either file.
scratch_module() {
  fixture scratch_module/MODULE.bazel.in NAME="$1" ROOT="$2" >MODULE.bazel
  fixture scratch_module/bazelrc.in ROOT="$2" >.bazelrc
}

#!/usr/bin/env bash
# `bazel test //...` (CI's, a developer's) configures the real JAX plugin's
# third-party code (abseil, protobuf, XLA, Eigen, JAX's kernels) only as
# //:wheels does. A target of //... that reaches it another way (the
# per-Python wheel that jax_settings wraps, named directly, builds it at
# fastbuild and C++20) compiles all of it a second time: about ten minutes
# on 2 cores, after a cold //:wheels that had already paid for it.
#
# cquery, no build: the configurations of every third-party target under
# the targets `bazel test //...` builds (//... less the manual ones) must be
# among those //:wheels gives the same target. Negative control: the same
# check with that per-Python wheel added must report it.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib/common.sh
# Under the checkout: the build root mounts its own /tmp, so a --query_file
# there would not be the one bazel reads.
tmp=$(mktemp -d "$PWD/.test_all_once.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

THIRD_PARTY='^@(com_google_absl|com_google_protobuf|jax|@_main~jax_rocm_plugin~[A-Za-z0-9_.-]+)//'

# configured NAME TARGETS...: "label config" of the third-party targets under TARGETS.
configured() {
  local name=$1
  shift
  { echo 'deps(set('; printf '%s\n' "$@"; echo '))'; } >"$tmp/$name.query"
  # --keep_going: analysis tests of //... expect some targets to fail.
  bazel cquery --keep_going --query_file="$tmp/$name.query" >"$tmp/$name.all" 2>"$tmp/$name.err" ||
    [[ -s $tmp/$name.all ]] || { tail -30 "$tmp/$name.err" >&2; fail "cquery ($name)"; }
  grep -E "$THIRD_PARTY" "$tmp/$name.all" | sort -u >"$tmp/$name" || true
  [[ -s $tmp/$name ]] || fail "no third-party target under $* ($name): the pattern $THIRD_PARTY matches nothing"
}

# forks NAME: targets of NAME configured where //:wheels does not configure them.
forks() {
  awk 'NR == FNR { seen[$1 " " $2] = 1; label[$1] = 1; next }
       ($1 in label) && !(($1 " " $2) in seen) { print }' "$tmp/wheels" "$tmp/$1"
}

bazel query '//... except attr(tags, "\bmanual\b", //...)' >"$tmp/targets" 2>"$tmp/query.err" ||
  { tail -20 "$tmp/query.err" >&2; fail "bazel query //..."; }
mapfile -t targets <"$tmp/targets"
configured wheels //:wheels
configured all "${targets[@]}"
extra=$(forks all)
[[ -z $extra ]] || fail "bazel test //... configures //:wheels' third-party code a second time, e.g.:
$(head -5 <<<"$extra")
(cquery 'somepath(//..., LABEL)' names the target; tag it manual or build it through jax_settings)"
echo "//...: $(wc -l <"$tmp/all") third-party targets, each in //:wheels' configurations"

configured control "${targets[@]}" //examples/jax_rocm_plugin:wheel
[[ -n $(forks control) ]] || fail "negative control: //examples/jax_rocm_plugin:wheel named directly was not reported"
echo "negative control: //examples/jax_rocm_plugin:wheel named directly is reported"
echo "PASS"

#!/usr/bin/env bash
# The tool wheel's binary (after `rocm-wheel glibc-floor --max 2.17`) runs on
# the oldest glibc reachable here: Debian 11's, 2.31 (the debian11 sysroot's
# ld.so and libc.so.6, through `ld.so --library-path`, not the build
# machine's). It prints its version and does real work: checks its own
# wheel, which it must find consistent with manylinux_2_17, and inspects it.
#   old_glibc_test.sh BINARY LD_SO WHEEL
set -euo pipefail
binary=$1 ldso=$2 wheel=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
libdir=$(dirname "$ldso")
[[ -f $libdir/libc.so.6 ]] || fail "no libc.so.6 next to $ldso"
glibc=$("$ldso" --library-path "$libdir" "$libdir/libc.so.6" | head -1)
[[ $glibc == *"version 2.31."* ]] || fail "$ldso is not glibc 2.31: $glibc"
run() { "$ldso" --library-path "$libdir" "$binary" "$@"; }
version=$(run --version) || fail "rocm-wheel --version under $glibc"
[[ $version == "rocm-wheel "* ]] || fail "--version printed '$version'"
report=$(run check "$wheel") || fail "rocm-wheel check of its own wheel under $glibc"
[[ $report == *"consistent with platform tag manylinux_2_17_x86_64"* ]] ||
  fail "its own check does not find its wheel at manylinux_2_17: $report"
run inspect --json "$wheel" >/dev/null || fail "rocm-wheel inspect of its own wheel under $glibc"
echo "PASS: $version ran under $glibc (check and inspect of its own wheel)"

#!/usr/bin/env bash
# The tool's aarch64 wheel, judged without an arm64 machine: its binary is an
# ELF64 AArch64 executable, needs no glibc newer than 2.17, and runs under
# qemu-user with the arm64 twin of the debian11 sysroot as its root (Debian
# 11's loader and libc for arm64, 2.31): it prints its version and does real
# work, inspecting its own wheel and the x86_64 one. The wheel carries that
# binary as its `rocm-wheel` script and is tagged manylinux_2_17_aarch64.
#   aarch64_test.sh BINARY LD_SO WHEEL X86_64_WHEEL
set -euo pipefail
binary=$1 ldso=$2 wheel=$3 x86_wheel=$4
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v qemu-aarch64 >/dev/null || fail "no qemu-aarch64: the build root installs qemu-user (scripts/buildroot-packages.txt)"

header=$(readelf -h "$binary")
grep -q "Class: *ELF64" <<<"$header" || fail "$binary is not ELF64: $header"
grep -q "Machine: *AArch64" <<<"$header" || fail "$binary is not for AArch64: $header"
# Every GLIBC version the binary needs, the newest last.
newest=$(readelf -V "$binary" | grep -o 'Name: GLIBC_[0-9.]*' | sed 's/.*GLIBC_//' | sort -V | tail -1)
[[ -n $newest ]] || fail "$binary needs no GLIBC version at all (not linked against glibc?)"
[[ $(printf '%s\n2.17\n' "$newest" | sort -V | tail -1) == 2.17 ]] || fail "$binary needs GLIBC_$newest, newer than 2.17"

# qemu's -L is the root the binary's absolute paths (its interpreter,
# /lib/ld-linux-aarch64.so.1, and the loader's library paths) resolve in.
root=$(cd "$(dirname "$ldso")/../.." && pwd)
[[ -e $root/lib/ld-linux-aarch64.so.1 ]] || fail "no lib/ld-linux-aarch64.so.1 in the sysroot $root"
run() { qemu-aarch64 -L "$root" "$binary" "$@"; }
version=$(run --version) || fail "rocm-wheel --version under qemu-aarch64"
[[ $version == "rocm-wheel "* ]] || fail "--version printed '$version'"
for w in "$wheel" "$x86_wheel"; do
  run inspect --json "$w" >/dev/null || fail "rocm-wheel inspect $(basename "$w") under qemu-aarch64"
done

name=$(basename "$wheel")
[[ $name == rocm_wheel-*-py3-none-manylinux_2_17_aarch64.whl ]] || fail "the wheel is named $name"
script=$(unzip -Z1 "$wheel" | grep '\.data/scripts/rocm-wheel$') || fail "$name has no rocm-wheel script"
cmp <(unzip -p "$wheel" "$script") "$binary" || fail "$name's $script is not the tested binary"
echo "PASS: $version (AArch64, GLIBC_$newest at most) ran under qemu-aarch64 with Debian 11's arm64 glibc; $name carries it"

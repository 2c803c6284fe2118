#!/usr/bin/env bash
# Regenerates the small committed ELF fixtures: shared objects for foreign
# architectures (bad-input tests) and tiny x86-64 ones (fuzz seed corpus).
# Needs gcc and the build root's LLVM (clang-N, lld-N, llvm-N):
#   scripts/buildroot tools/crates/elf-edit/tests/data/make-fixtures.sh
# The committed files came from older compilers (zig's clang for the
# foreign architectures, Debian 12's gcc and clang-15); the tests need only
# their kind (machine, class, byte order, layout), not these exact bytes.
# The fuzz seeds in ../../fuzz/corpus/set_rpath are copies of the x86-64
# ones and of aarch64.so.
set -euo pipefail
cd "$(dirname "$0")"
llvm=$(ls -d /usr/lib/llvm-*/bin | sort -V | tail -1)
[[ -x $llvm/clang && -x $llvm/ld.lld ]] || { echo "make-fixtures: needs $llvm/clang and ld.lld (clang-N, lld-N): run it in scripts/buildroot" >&2; exit 1; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
printf 'int f(void) { return 1; }\n' > "$work/f.c"
# Foreign architectures: no libraries needed (-nostdlib), so no sysroot.
cross=(-shared -fPIC -nostdlib -fuse-ld=lld -s)
"$llvm/clang" --target=aarch64-linux-gnu "${cross[@]}" -o aarch64.so "$work/f.c"
"$llvm/clang" --target=powerpc64-linux-gnu "${cross[@]}" -o ppc64-big-endian.so "$work/f.c"
"$llvm/clang" --target=i386-linux-gnu "${cross[@]}" -o i386.so "$work/f.c"
# Tiny x86-64 objects: no page padding, stripped, with and without rpath.
tiny=(-shared -fPIC -nostdlib -s -Wl,-z,noseparate-code -Wl,-z,max-page-size=0x1000 -Wl,-soname,libtiny.so)
gcc "${tiny[@]}" -o tiny-none.so "$work/f.c"
gcc "${tiny[@]}" -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/../lib' -o tiny-runpath.so "$work/f.c"
gcc "${tiny[@]}" -Wl,--disable-new-dtags -Wl,-rpath,'$ORIGIN' -o tiny-rpath.so "$work/f.c"
# A tiny dynamically linked executable (.interp after the program headers)
# and one without section headers.
printf 'void _start(void) { for (;;) ; }\n' > "$work/s.c"
gcc -nostdlib -fPIE -pie -s -Wl,-z,noseparate-code -Wl,--dynamic-linker=/lib64/ld-linux-x86-64.so.2 \
  -Wl,-rpath,/opt/x -o tiny-exe "$work/s.c" ./tiny-none.so
"$llvm/llvm-objcopy" --strip-sections tiny-exe tiny-exe-nosections
mv tiny-exe tiny-exe.so; mv tiny-exe-nosections tiny-exe-nosections.so
"$llvm/clang" -fuse-ld=lld -shared -fPIC -nostdlib -s -Wl,-soname,libtiny.so -o tiny-lld.so "$work/f.c"
ls -l

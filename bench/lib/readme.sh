# Sourced by the bench scripts whose README.md holds generated numbers
# followed by hand-written findings: a run rewrites the numbers and must not
# lose the findings, which start at this marker line.
readme_marker='<!-- Hand-written from here on: run.sh keeps this part. -->'

# write_readme FILE: FILE becomes stdin (the generated part), a blank line
# and FILE's own lines from the marker on (none if it has no marker).
write_readme() {
  local file=$1 tmp
  tmp=$(mktemp "$file.XXXXXX")
  cat >"$tmp"
  if [[ -f $file ]] && grep -qxF -- "$readme_marker" "$file"; then
    echo >>"$tmp"
    awk -v m="$readme_marker" '$0 == m { keep = 1 } keep' "$file" >>"$tmp"
  fi
  mv "$tmp" "$file"
}

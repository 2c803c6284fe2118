# Scratch output bases for cold-build benchmarks. Source it, then:
#   scratch_work NAME       sets $work, a scratch directory removed on exit
#   ob=$(output_base TAG)   a fresh output base under it, shut down on exit
#   drop_output_base OB     shuts one down and removes it now (frees disk)
# Sandboxes and repository files can be read-only: removal makes them
# writable first.

scratch_work() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  trap _drop_all_output_bases EXIT
}

output_base() {
  local ob=$work/ob-$1
  mkdir -p "$ob"
  echo "$ob"
}

drop_output_base() {
  bazel --output_base="$1" shutdown >/dev/null 2>&1 || true
  chmod -R u+w "$1" 2>/dev/null || true
  rm -rf "$1"
}

_drop_all_output_bases() {
  local ob
  for ob in "$work"/ob-*; do
    [[ -d $ob ]] && drop_output_base "$ob"
  done
  chmod -R u+w "$work" 2>/dev/null || true
  rm -rf "$work"
}

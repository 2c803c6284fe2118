#!/usr/bin/env bash
# scripts/setup.sh is idempotent: run after a completed setup (make runs it
# first), it installs nothing, creates nothing and changes none of what it
# made (the venv, buildifier, the build root, rules_rust's registry, the
# free-threaded CPython). Runs on the host.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib/common.sh
root=$(scripts/buildroot --path)
made=(.venv/.requirements.sha256 .venv/bin/python node_modules/.bin/buildifier "$root/../complete" "$root/../versions.txt" "$root/../rust/registry/modules/rules_rust/metadata.json"
  "$(scripts/freethreaded-python --path)/rules_rocm-build.txt")
snapshot() {
  local f
  for f in "${made[@]}"; do
    [[ -e $f ]] || fail "$f missing after setup"
    stat -L -c '%n %Y %s %i' "$f"
  done
  dpkg-query -W -f='${Package} ${Version}\n' | sha256sum
}
before=$(snapshot)
out=$(scripts/setup.sh 2>&1) || { echo "$out" >&2; fail "scripts/setup.sh failed on its second run"; }
if grep -Eiq 'installing|creating|apt-get|npm ci' <<<"$out"; then
  echo "$out" >&2
  fail "the second setup run installed or created something"
fi
after=$(snapshot)
[[ $before == "$after" ]] || { diff <(echo "$before") <(echo "$after") >&2; fail "the second setup run changed what the first made"; }
echo "ok: a second scripts/setup.sh changed nothing"

#!/usr/bin/env bash
# Stamping: --stamp --workspace_status_command puts the commit into the
# generated version module and METADATA; unstamped builds carry no commit,
# and a stamped build in between leaves them byte-for-byte as they were.
# (Byte-identical clean builds in two output bases: clean_builds_test.sh.)
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib/common.sh
# The workspace's own output base: its external repositories, the
# rocm-wheel tool and the server are shared with `make bazel-test`.
# One version keeps this quick; the Python-independent wheels come along.
FLAGS=(--disk_cache= --remote_cache= --//:python_versions=3.12)
PY=.venv/bin/python
[[ -x $PY ]] || fail "$PY missing; run \`make setup\` first"
commit=$(git rev-parse HEAD)
[[ $commit =~ ^[0-9a-f]{40}$ ]] || fail "git rev-parse HEAD gave '$commit'"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The wheels of //:wheels for FLAGS; with their sha256; the one matching a pattern.
wheels() { bz cquery "${FLAGS[@]}" --output=files //:wheels 2>/dev/null | sort; }
wheel_shas() { wheels | xargs sha256sum; }
wheel() {
  local w
  w=$(wheels | grep -E "/$1[^/]*\.whl$")
  [[ $(wc -l <<<"$w") == 1 && -f $w ]] || fail "want one built wheel named $1*, got: $w"
  echo "$w"
}
# read_member WHEEL MEMBER-REGEX: prints the first matching member.
read_member() {
  "$PY" - "$1" "$2" <<'PYEOF'
import re, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = [n for n in z.namelist() if re.search(sys.argv[2], n)]
assert names, f"{sys.argv[2]} not in {sys.argv[1]}"
sys.stdout.write(z.read(names[0]).decode())
PYEOF
}

# Unstamped.
bz build "${FLAGS[@]}" //:wheels
wheel_shas >"$tmp/unstamped1"
[[ $(wc -l <"$tmp/unstamped1") -ge 3 ]] || fail "too few wheels: $(cat "$tmp/unstamped1")"

jaxlib=$(wheel 'example_jaxlib-[^-]*-cp312-')
version_py=$(read_member "$jaxlib" '^example_jaxlib/version\.py$')
grep -qx 'commit = None' <<<"$version_py" || fail "unstamped version.py: $version_py"
# The METADATA must be there (read_member fails otherwise) before its
# absence of a commit means anything.
metadata=$(read_member "$jaxlib" '^example_jaxlib-[^/]*\.dist-info/METADATA$')
grep -qx 'Name: example-jaxlib' <<<"$metadata" || fail "unstamped METADATA is not example-jaxlib's: $metadata"
if grep -q '^Project-URL: Source' <<<"$metadata"; then
  fail "unstamped METADATA has a Source URL"
fi
if grep -qF "$commit" <<<"$metadata$version_py"; then
  fail "unstamped wheel carries the commit $commit"
fi
echo "ok: unstamped wheel carries no commit (version.py, METADATA)"

# Stamped: the commit of this checkout, plus an extra source tree's commit.
ROCM_WHEEL_STAMP_COMMITS="xla=$PWD" bz build "${FLAGS[@]}" //:wheels \
  --stamp --workspace_status_command="$PWD/tools/workspace_status.sh"
jaxlib=$(wheel 'example_jaxlib-[^-]*-cp312-')
version_py=$(read_member "$jaxlib" '^example_jaxlib/version\.py$')
for want in "commit = \"$commit\"" "stamped = True" "    \"workspace\": \"$commit\"," "    \"xla\": \"$commit\","; do
  grep -qxF "$want" <<<"$version_py" || fail "stamped version.py lacks '$want': $version_py"
done
read_member "$jaxlib" 'METADATA$' | grep -qxF "Project-URL: Source, https://example.invalid/rules_rocm/commit/$commit" ||
  fail "stamped METADATA lacks the Source URL with $commit"
plugin=$(wheel 'example_rocm_plugin-[^-]*-cp312-')
read_member "$plugin" '^example_rocm_plugin/version\.py$' | grep -qxF "commit = \"$commit\"" ||
  fail "plugin version.py not stamped"
echo "ok: stamped wheels carry commit $commit"

# A stamped build without the status script names the missing key.
if msg=$(bz build "${FLAGS[@]}" //:wheels --stamp --workspace_status_command=/bin/true 2>&1); then
  fail "stamping without STABLE_GIT_COMMIT succeeded"
fi
grep -q "workspace status has no key STABLE_GIT_COMMIT" <<<"$msg" || fail "unhelpful error: $msg"
echo "ok: missing status key is reported"

# Unstamped again, after the stamped builds: the same bytes as before them.
bz build "${FLAGS[@]}" //:wheels
wheel_shas >"$tmp/unstamped2"
diff "$tmp/unstamped1" "$tmp/unstamped2" || fail "unstamped wheels changed after a stamped build"
echo "ok: unstamped wheels unchanged by the stamped build in between ($(wc -l <"$tmp/unstamped1") wheels)"

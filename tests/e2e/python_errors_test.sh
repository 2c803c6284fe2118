#!/usr/bin/env bash
# Python-version errors are analysis failures that say what is wrong and how
# to fix it: a version without an interpreter, malformed versions, and
# per-Python targets built without a version.
set -euo pipefail
cd "$(dirname "$0")/../.."
# The workspace's own output base: its external repositories (the
# cargo-built tool) and server are shared with `make bazel-test`.
bz() { bazel "$@"; }
FLAGS=(--disk_cache= --remote_cache=)

# expect_failure "what" "expected message (grep -E)" bazel args...
expect_failure() {
  local what=$1 want=$2
  shift 2
  local out
  if out=$(bz build "${FLAGS[@]}" --nobuild "$@" 2>&1); then
    echo "FAIL: $what: the build succeeded" >&2
    exit 1
  fi
  if ! grep -qE -- "$want" <<<"$out"; then
    echo "FAIL: $what: message lacks /$want/:" >&2
    echo "$out" | tail -20 >&2
    exit 1
  fi
  echo "ok: $what"
}

# Where discovery looks first, as a user would name it.
dir=${PYENV_ROOT:-$HOME/.pyenv}/versions

expect_failure "version without an interpreter" \
  "no interpreter for Python 3\.9 .*looked in ${dir//./\\.}.*pyenv install 3\.9" \
  //:wheels --//:python_versions=3.11,3.9
# flag value | the element the message must name
for case in "3.x|3.x" "3|3" "311|311" "3.12.1|3.12.1" " | " "3.12,,|" "2.7|2.7" "3.012|3.012" "3.11;3.12|3.11;3.12"; do
  value=${case%|*}
  elem=${case#*|}
  expect_failure "malformed version '$value'" \
    "malformed Python version '${elem//./\\.}' in --//:python_versions" \
    //:wheels "--//:python_versions=$value"
done
expect_failure "duplicate version" "Python 3\.12 is listed twice" //:wheels --//:python_versions=3.12,3.12
# Bazel's error for an explicitly requested incompatible target names only the
# unsatisfied constraint; rules_rocm's constraint name is the explanation.
expect_failure "per-Python target without a version" \
  "didn't satisfy constraint //rules/python:no_Python_version_selected\.Build_per-Python_targets_through_python_wheels,_or_directly_with_a_version_setting_\(docs/python\.md\)" \
  //examples/jaxlib:wheel
expect_failure "per-Python extension without a version" \
  "didn't satisfy constraint //rules/python:no_Python_version_selected\.Build_per-Python_targets_through_python_wheels" \
  //examples/jaxlib:_core
expect_failure "per-Python target for a version without an interpreter" \
  "Python 3\.9 is selected but no toolchain provides it: no interpreter for it was found in ${dir//./\\.}" \
  //examples/jaxlib:wheel --//rules/python:version=3.9

# Interpreters given explicitly (rules_rocm_dependencies(python_interpreters=...))
# in a downstream workspace: a missing interpreter and a malformed version.
ws=$(mktemp -d)
trap 'bazel --output_base="$ws/ob" shutdown >/dev/null 2>&1 || true; rm -rf "$ws"' EXIT
mkdir -p "$ws/main"
# A WORKSPACE-mode consumer (this machine's overrides: /etc/bazel.bazelrc).
echo "common --enable_workspace --noenable_bzlmod" >"$ws/main/.bazelrc"
touch "$ws/main/BUILD.bazel"
downstream_failure() {
  local what=$1 want=$2 interpreters=$3 out
  cat >"$ws/main/WORKSPACE" <<WS
workspace(name = "downstream")
local_repository(name = "rules_rocm", path = "$PWD")
load("@rules_rocm//rules:repositories.bzl", "rules_rocm_dependencies")
rules_rocm_dependencies(python_interpreters = $interpreters)
WS
  if out=$(cd "$ws/main" && bazel --output_base="$ws/ob" query @rocm_python//:all 2>&1); then
    echo "FAIL: $what: the query succeeded" >&2
    exit 1
  fi
  grep -qE -- "$want" <<<"$out" || { echo "FAIL: $what: message lacks /$want/:" >&2; echo "$out" | tail -20 >&2; exit 1; }
  echo "ok: $what"
}
downstream_failure "explicit interpreter that does not exist" \
  "the interpreter given for Python 3\.12 \(/nonexistent/python3\.12\) does not exist" \
  '{"3.12": "/nonexistent/python3.12"}'
downstream_failure "explicit interpreter with a malformed version" \
  "malformed Python version '3\.x' in python_interpreters" \
  '{"3.x": "/usr/bin/python3"}'

#!/usr/bin/env bash
# Python-version errors are analysis failures that say what is wrong and how
# to fix it. Here: the directory a missing interpreter was looked for in (this
# machine's), per-Python targets requested without a version (Bazel's
# incompatible-target error, which an analysis test cannot request) and
# interpreters given to a downstream WORKSPACE. The flag and setting errors
# (malformed or duplicate --//:python_versions, a version without an
# interpreter, a malformed or interpreter-less //rules/python:version) are
# analysis tests: //tests/analysis:python (tests/analysis/python_test.bzl).
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

# Where discovery looks first, as a user would name it: the message's wording
# is an analysis test, the directory it names depends on this machine.
dir=${PYENV_ROOT:-$HOME/.pyenv}/versions
expect_failure "version without an interpreter names where it looked" \
  "no interpreter for Python 3\.9 .*looked in ${dir//./\\.}.*pyenv install 3\.9" \
  //:wheels --//:python_versions=3.11,3.9

# Bazel's error for an explicitly requested incompatible target names only the
# unsatisfied constraint; rules_rocm's constraint name is the explanation.
expect_failure "per-Python target without a version" \
  "didn't satisfy constraint //rules/python:no_Python_version_selected\.Build_per-Python_targets_through_python_wheels,_or_directly_with_a_version_setting_\(docs/python\.md\)" \
  //examples/jaxlib:wheel
expect_failure "per-Python extension without a version" \
  "didn't satisfy constraint //rules/python:no_Python_version_selected\.Build_per-Python_targets_through_python_wheels" \
  //examples/jaxlib:_core

# Interpreters given explicitly (rules_rocm_dependencies(python_interpreters=...))
# in a downstream workspace: a missing interpreter and a malformed version.
ws=$(mktemp -d)
trap 'bazel --output_base="$ws/ob" shutdown >/dev/null 2>&1 || true; rm -rf "$ws"' EXIT
mkdir -p "$ws/main"
# A WORKSPACE-mode consumer (this machine's overrides: /etc/bazel/bazelrc).
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

#!/usr/bin/env bash
# Python errors are analysis failures that say what is wrong and how to fix
# it. Here what an analysis test cannot request: a per-Python target built
# in the Python-independent configuration (Bazel's incompatible-target
# error), a Python version with no rules_python toolchain (rules_python's
# version-unaware fallback resolves another one; a free-threaded one too),
# and the removed ways to give interpreters (rules_rocm.python tags,
# python_interpreters in a WORKSPACE), which must name their replacement. The flag errors (malformed,
# duplicate or undeclared --//:python_versions) are analysis tests:
# //tests/analysis:python (tests/analysis/python_test.bzl).
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib/common.sh
# The workspace's own output base: its external repositories (the
# cargo-built tool) and server are shared with `make bazel-test`.
FLAGS=(--disk_cache= --remote_cache=)
PYFLAG=--@rules_python//python/config_settings:python_version

log=$(mktemp)
# analysis_error "what" "expected message (grep -E)" bazel args...
analysis_error() {
  local what=$1 want=$2
  shift 2
  expect_build_failure "$log" "${FLAGS[@]}" --nobuild "$@"
  expect_match "$log" "$want"
  echo "ok: $what"
}

# Bazel's error for an explicitly requested incompatible target names only the
# unsatisfied constraint; rules_rocm's constraint name is the explanation.
analysis_error "per-Python target in a configuration without a Python version" \
  "didn't satisfy constraint //rules/python:No_Python_version_in_this_configuration\.Build_per-Python_targets_through_python_wheels_or_set_the_rules_python_python_version_flag_\(docs/python\.md\)" \
  "$PYFLAG=" //examples/jaxlib:wheel
analysis_error "a Python version without a toolchain" \
  "Python 3\.9 is selected but the rules_python toolchain that resolved is Python 3\.[0-9]+ .*Register a toolchain for 3\.9 \(docs/python\.md\)" \
  "$PYFLAG=3.9" //examples/jaxlib:_core
# Free-threaded 3.13 has no toolchain here: the free-threaded 3.14 one,
# registered version-unaware too, resolves, and its version is refused.
analysis_error "a free-threaded Python version without a toolchain" \
  "Python 3\.13t is selected but the rules_python toolchain that resolved is Python 3\.14t .*Register a toolchain for 3\.13t \(docs/python\.md\)" \
  "$PYFLAG=3.13" --@rules_python//python/config_settings:py_freethreaded=yes //examples/jaxlib:_core

# The removed ways to give interpreters, from downstream modules and WORKSPACEs.
ws=$(mktemp -d)
trap 'for m in mod ws; do (cd "$ws/$m" 2>/dev/null && bazel --output_base="$ws/ob-$m" shutdown >/dev/null 2>&1) || true; done; rm -rf "$ws" "$log"' EXIT
root=$PWD
mkdir -p "$ws/mod" "$ws/ws"
(
  cd "$ws/mod"
  scratch_module removed_python_tag "$root"
  fixture python_errors/removed_python_tag.MODULE.bazel >>MODULE.bazel
  touch BUILD.bazel
)
expect_failure "$log" env -C "$ws/mod" bazel --output_base="$ws/ob-mod" query @rules_rocm//:python_versions
expect_in "$log" 'rules_rocm.python(version = ..., interpreter = ...) in removed_python_tag is gone: interpreters come from rules_python'
echo "ok: rules_rocm.python tags name rules_python's replacement"

# A WORKSPACE-mode consumer (this machine's overrides: /etc/bazel/bazelrc).
echo "common --enable_workspace --noenable_bzlmod" >"$ws/ws/.bazelrc"
touch "$ws/ws/BUILD.bazel"
downstream_failure() {
  local what=$1 want=$2 args=$3
  fixture python_errors/WORKSPACE.in ROOT="$root" ARGS="$args" >"$ws/ws/WORKSPACE"
  expect_failure "$log" env -C "$ws/ws" bazel --output_base="$ws/ob-ws" query @rocm_python//:all
  expect_in "$log" "$want"
  echo "ok: $what"
}
downstream_failure "python_interpreters names rules_python's replacement" \
  "rules_rocm_dependencies(python_interpreters = ...) is gone: register the interpreters as rules_python toolchains" \
  'python_interpreters = {"3.12": "/usr/bin/python3.12"}'
downstream_failure "a malformed declared version" \
  "rules_rocm_dependencies(python_versions = ...): '3.x' is not a Python minor version" \
  'python_versions = ["3.12", "3.x"]'
echo "PASS"

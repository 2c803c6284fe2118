# Sourced by e2e scripts. expected_python_versions: the CPython minor
# versions >= 3.11 with headers that a user finds on this machine (pyenv's
# releases, python3.N on PATH; then the free-threaded ones, "3.14t"), listed without the code that registers them
# as rules_python local runtimes (tests/python_runtimes.bzl) or the list
# MODULE.bazel declares, so that either going stale shows up as a mismatch.
expected_python_versions() {
  local root=${PYENV_ROOT:-$HOME/.pyenv} exe n
  local -a candidates=()
  for exe in "$root"/versions/*/bin/python3.*; do
    [[ $exe =~ /versions/[0-9]+\.[0-9]+\.[0-9]+/bin/python[0-9]+\.[0-9]+$ ]] && candidates+=("$exe")
  done
  for n in $(seq 0 39); do
    exe=$(command -v "python3.$n" 2>/dev/null) && candidates+=("$exe")
  done
  for exe in "${candidates[@]}"; do
    "$exe" -I -c '
import os, sys, sysconfig
if sys.version_info >= (3, 11) and os.path.exists(os.path.join(sysconfig.get_path("include"), "Python.h")):
    print("%d.%d" % sys.version_info[:2])'
  done | sort -u -V
  # The free-threaded builds setup makes (scripts/freethreaded-python), bound
  # into the build root by scripts/buildroot.
  for exe in /opt/rules_rocm_python/*/bin/python3.*t; do
    [[ -x $exe ]] && "$exe" -I -c 'import sys; print("%d.%d%s" % (*sys.version_info[:2], sys.abiflags))'
  done
}

# local_pythons_module PATH...: appends to the scratch module's MODULE.bazel
# the given interpreters as rules_python local runtimes (py<major><minor>),
# registered as toolchains and declared as rules_rocm's Python versions.
local_pythons_module() {
  local exe v repo repos="" versions=""
  fixture local_pythons/rules_python.MODULE.bazel >>MODULE.bazel
  for exe in "$@"; do
    v=$("$exe" -c 'import sys; print("%d.%d" % sys.version_info[:2])') || fail "$exe does not run"
    repo=py${v/./}
    fixture local_pythons/runtime.MODULE.bazel.in REPO="$repo" EXE="$exe" >>MODULE.bazel
    repos+="\"$repo\", "
    versions+="\"$v\", "
  done
  fixture local_pythons/toolchains.MODULE.bazel.in REPOS="${repos%, }" VERSIONS="${versions%, }" >>MODULE.bazel
}

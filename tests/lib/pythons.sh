# Sourced by e2e scripts. expected_python_versions: the CPython minor
# versions >= 3.10 with headers that a user finds on this machine (pyenv's
# releases, python3.N on PATH), listed without the code that registers them
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
if sys.version_info >= (3, 10) and os.path.exists(os.path.join(sysconfig.get_path("include"), "Python.h")):
    print("%d.%d" % sys.version_info[:2])'
  done | sort -u -V
}

# local_pythons_module PATH...: appends to the scratch module's MODULE.bazel
# the given interpreters as rules_python local runtimes (py<major><minor>),
# registered as toolchains and declared as rules_rocm's Python versions.
local_pythons_module() {
  local exe v repo repos="" versions=""
  cat >>MODULE.bazel <<'MOD'

bazel_dep(name = "rules_python", version = "1.4.0")

# local_runtime_repo's BUILD file names @platforms from this module.
bazel_dep(name = "platforms", version = "0.0.10")

local_runtime_repo = use_repo_rule("@rules_python//python/local_toolchains:repos.bzl", "local_runtime_repo")

local_runtime_toolchains_repo = use_repo_rule("@rules_python//python/local_toolchains:repos.bzl", "local_runtime_toolchains_repo")
MOD
  for exe in "$@"; do
    v=$("$exe" -c 'import sys; print("%d.%d" % sys.version_info[:2])') || fail "$exe does not run"
    repo=py${v/./}
    cat >>MODULE.bazel <<MOD

local_runtime_repo(
    name = "$repo",
    interpreter_path = "$exe",
    on_failure = "fail",
)
MOD
    repos+="\"$repo\", "
    versions+="\"$v\", "
  done
  cat >>MODULE.bazel <<MOD

local_runtime_toolchains_repo(
    name = "pythons",
    runtimes = [${repos%, }],
)

register_toolchains("@pythons//:all")

rules_rocm_pythons = use_extension("@rules_rocm//rules:extensions.bzl", "rules_rocm")
rules_rocm_pythons.python_versions(versions = [${versions%, }])
MOD
}

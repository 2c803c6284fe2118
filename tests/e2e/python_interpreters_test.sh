#!/usr/bin/env bash
# Python from rules_python, the positive case: a scratch downstream module
# registers two installed interpreters as rules_python local runtimes
# (local_runtime_repo + local_runtime_toolchains_repo) and declares their
# versions (rules_rocm.python_versions), then
#  - python_wheels builds its per-Python wheel for exactly those versions
#    (not for the other interpreters on this machine),
#  - each wheel pip-installs into a venv of its interpreter and its extension
#    reports the version it was compiled for (current_py_cc_headers of that
#    runtime),
#  - one `bazel test` runs a rules_python py_test importing the extension on
#    each version (py_test(python_version = ...): the extension is built in
#    the py_test's configuration, against that version's headers).
# The same module in WORKSPACE mode (rules_python's WORKSPACE API and
# rules_rocm_dependencies(python_versions = ...)) gives the same wheel set.
set -euo pipefail
source "$(dirname "$0")/../lib/scratch_test.sh"

pyenv_root=${PYENV_ROOT:-$HOME/.pyenv}
py312=$(ls -d "$pyenv_root"/versions/3.12.*/bin/python3.12 2>/dev/null | sort -V | tail -1)
[[ -x $py312 ]] || fail "no pyenv Python 3.12 in $pyenv_root/versions (pyenv install 3.12; make setup)"
py314=/usr/bin/python3.14
[[ -x $py314 ]] || fail "$py314 missing: run this inside the build root (scripts/buildroot)"
# More interpreters exist here: the point is that only these two are used.
source "$root/tests/lib/pythons.sh"
found=$(expected_python_versions | tr '\n' ' ')
[[ $found == *3.13* ]] || fail "this test wants a Python the declared list leaves out (3.13); found: $found"

ws=$(mktemp -d "${TMPDIR:-/tmp}/python_interpreters.XXXXXX")
ob="$ws/ob"
trap '(cd "$ws/main" 2>/dev/null && "$BAZEL" --output_base="$ob" shutdown >/dev/null 2>&1) || true; rm -rf "$ws"' EXIT
mkdir -p "$ws/main/probe"
cd "$ws/main"

scratch_module interpreters_probe "$root"
use_prebuilt_tool "$root" || fail "no rocm-wheel to use as a prebuilt tool"
local_pythons_module "$py312" "$py314"
fixture python_interpreters/WORKSPACE.in ROOT="$root" PY312="$py312" PY314="$py314" >WORKSPACE
# The WORKSPACE-mode run passes --enable_workspace --noenable_bzlmod.
echo "build $(shared_disk_cache)" >>.bazelrc
# The top-level Python (rules_python's default version, 3.11, has no
# toolchain here): per-Python targets built directly use this one.
echo "common --@rules_python//python/config_settings:python_version=3.12" >>.bazelrc
fixture_copy python_interpreters/module .


# build_and_check MODE FLAGS...: the wheel set of //:wheels, one per given
# version, each installed into a venv of its own interpreter.
build_and_check() {
  local mode=$1
  shift
  echo "--- $mode"
  bz build "$@" //:wheels 2>"$ws/build.err" || { tail -40 "$ws/build.err" >&2; fail "$mode: bazel build //:wheels"; }
  mapfile -t wheels < <(bz cquery "$@" --output=files //:wheels 2>/dev/null | grep '\.whl$' | sort)
  local names
  names=$(for w in "${wheels[@]}"; do basename "$w"; done | sort | tr '\n' ' ')
  [[ $names == "interpreters_probe-0.1.0-cp312-cp312-manylinux_2_28_x86_64.whl interpreters_probe-0.1.0-cp314-cp314-manylinux_2_28_x86_64.whl " ]] ||
    fail "$mode: //:wheels gave [$names], want exactly the cp312 and cp314 wheels"
  local w v interp venv got want
  for w in "${wheels[@]}"; do
    case $w in
      *-cp312-*) v=3.12 interp=$py312 ;;
      *-cp314-*) v=3.14 interp=$py314 ;;
    esac
    venv="$ws/venv-$v"
    "$interp" -m venv --clear "$venv"
    PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/python" -m pip install -q --no-index "$w" ||
      fail "$mode: pip install $(basename "$w") into a Python $v venv"
    got=$(cd "$ws" && "$venv/bin/python" -I -c 'import interpreters_probe; print(interpreters_probe.compiled_for())')
    want=$("$interp" -I -c 'import platform; print(platform.python_version())')
    [[ $got == "$want" ]] || fail "$mode: the cp${v/./} extension was compiled for Python $got, its interpreter $interp is $want"
    echo "ok: $mode: $(basename "$w") installs and runs in Python $want ($interp)"
  done
}

echo "--- py_test(python_version = ...) per version, one bazel test"
bz test //probe:all 2>"$ws/test.err" >"$ws/test.out" || { tail -40 "$ws/test.err" >&2; cat "$ws/test.out" >&2; fail "bazel test //probe:all"; }
grep -q "import_test_312 .*PASSED" "$ws/test.out" && grep -q "import_test_314 .*PASSED" "$ws/test.out" ||
  { cat "$ws/test.out" >&2; fail "the two py_tests did not both pass"; }
echo "ok: //probe:import_test_312 and _314 import the extension built for their Python"

build_and_check "bzlmod (rules_python local runtimes)"
# WORKSPACE mode takes a prebuilt rocm-wheel: the checkout's (bzlmod) one.
rw=$(cd "$root" && BAZEL=$BAZEL rocm_wheel_path) || fail "cannot build //tools:rocm-wheel"
build_and_check "WORKSPACE mode (rules_python WORKSPACE API)" --enable_workspace --noenable_bzlmod --repo_env=ROCM_WHEEL="$rw"
echo "PASS"

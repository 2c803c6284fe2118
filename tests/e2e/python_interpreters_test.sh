#!/usr/bin/env bash
# Interpreters given explicitly, the positive case: a scratch downstream
# module names two (rules_rocm.python(version=, interpreter=) tags of
# rules/extensions.bzl), then
#  - @rocm_python has toolchains for exactly those versions and paths,
#  - python_wheels builds its per-Python wheel for exactly those versions
#    (not for the other interpreters discovery would find on this machine),
#  - each wheel pip-installs into a venv of its interpreter and its extension
#    reports the version it was compiled for.
# The same module in WORKSPACE mode (rules_rocm_dependencies(python_interpreters=))
# must give the same wheel set.
set -euo pipefail
export LC_ALL=C
root="$(cd "$(dirname "$0")/../.." && pwd)"
BAZEL=${BAZEL:-bazel}
source "$root/tests/lib/common.sh"

pyenv_root=${PYENV_ROOT:-$HOME/.pyenv}
py312=$(ls -d "$pyenv_root"/versions/3.12.*/bin/python3.12 2>/dev/null | sort -V | tail -1)
[[ -x $py312 ]] || fail "no pyenv Python 3.12 in $pyenv_root/versions (pyenv install 3.12; make setup)"
py314=/usr/bin/python3.14
[[ -x $py314 ]] || fail "$py314 missing: run this inside the build root (scripts/buildroot)"
# Discovery alone would find more: the point is that only these two are used.
source "$root/tests/lib/pythons.sh"
found=$(expected_python_versions | tr '\n' ' ')
[[ $found == *3.13* ]] || fail "this test wants a Python the explicit list leaves out (3.13); found: $found"

ws=$(mktemp -d "${TMPDIR:-/tmp}/python_interpreters.XXXXXX")
ob="$ws/ob"
trap '(cd "$ws/main" 2>/dev/null && "$BAZEL" --output_base="$ob" shutdown >/dev/null 2>&1) || true; rm -rf "$ws"' EXIT
mkdir -p "$ws/main/probe"
cd "$ws/main"

scratch_module interpreters_probe "$root"
cat >>MODULE.bazel <<EOF

rules_rocm = use_extension("@rules_rocm//rules:extensions.bzl", "rules_rocm")
rules_rocm.python(version = "3.12", interpreter = "$py312")
rules_rocm.python(version = "3.14", interpreter = "$py314")
EOF
cat >WORKSPACE <<EOF
workspace(name = "interpreters_probe")

local_repository(name = "rules_rocm", path = "$root")

load("@rules_rocm//rules:repositories.bzl", "rules_rocm_dependencies", "rules_rocm_toolchains")

rules_rocm_dependencies(python_interpreters = {"3.12": "$py312", "3.14": "$py314"})

rules_rocm_toolchains()
EOF
# The WORKSPACE-mode run passes --enable_workspace --noenable_bzlmod.
echo "build $(shared_disk_cache)" >>.bazelrc
cat >BUILD.bazel <<'EOF'
load("@rules_rocm//rules:defs.bzl", "python_wheels")

python_wheels(
    name = "wheels",
    per_python = ["//probe:wheel"],
)
EOF
cat >probe/BUILD.bazel <<'EOF'
load("@rules_rocm//rules:defs.bzl", "python_extension", "rocm_python_wheel", "wheel_files")

package(default_visibility = ["//visibility:public"])

python_extension(
    name = "_probe",
    srcs = ["probe.c"],
)

wheel_files(
    name = "files",
    srcs = [":_probe"],
    prefix = "interpreters_probe",
)

rocm_python_wheel(
    name = "wheel",
    srcs = ["interpreters_probe/__init__.py", ":files"],
    distribution = "interpreters-probe",
    platform_tag = "manylinux_2_28_x86_64",
    version = "0.1.0",
)
EOF
cat >probe/probe.c <<'EOF'
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *compiled_for(PyObject *self, PyObject *args) {
  (void)self;
  (void)args;
  return PyUnicode_FromString(PY_VERSION);
}

static PyMethodDef methods[] = {{"compiled_for", compiled_for, METH_NOARGS, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_probe", NULL, -1, methods};

PyMODINIT_FUNC PyInit__probe(void) { return PyModule_Create(&module); }
EOF
mkdir -p probe/interpreters_probe
echo 'from interpreters_probe._probe import compiled_for' >probe/interpreters_probe/__init__.py

bz() { "$BAZEL" --output_base="$ob" "$@"; }

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

# The toolchains the repository generated: exactly the two given interpreters.
bz build --nobuild //:wheels 2>"$ws/build.err" || { tail -40 "$ws/build.err" >&2; fail "analysis of //:wheels"; }
versions_bzl=$(find "$ob/external" -maxdepth 2 -path '*rocm_python/versions.bzl' | head -1)
[[ -n $versions_bzl ]] || fail "no rocm_python/versions.bzl under $ob/external"
got=$("$py314" - "$versions_bzl" <<'EOF'
import sys
ns = {}
exec(open(sys.argv[1]).read(), ns)
print(" ".join(f"{v}={ns['PYTHONS'][v]['interpreter']}" for v in sorted(ns["PYTHONS"])))
EOF
)
[[ $got == "3.12=$py312 3.14=$py314" ]] || fail "@rocm_python holds [$got], want [3.12=$py312 3.14=$py314]"
echo "ok: @rocm_python: $got"

build_and_check "bzlmod (rules_rocm.python tags)"
# WORKSPACE mode takes a prebuilt rocm-wheel: the checkout's (bzlmod) one.
source "$root/tests/lib/rocm_wheel.sh"
rw=$(cd "$root" && BAZEL=$BAZEL rocm_wheel_path) || fail "cannot build //tools:rocm-wheel"
build_and_check "WORKSPACE mode (python_interpreters)" --enable_workspace --noenable_bzlmod --repo_env=ROCM_WHEEL="$rw"
echo "PASS"

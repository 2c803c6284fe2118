#!/usr/bin/env bash
# Idempotent prerequisites for `make wheels` / `make test` on Debian 12: the
# host tools that make the build root (mmdebstrap, bubblewrap) and that the
# host import test uses (gcc, binutils, unzip), a Python venv
# with the test tools, buildifier from npm, the Debian sid build root
# itself (scripts/buildroot), where Bazel, HIP, Rust and Python run, and a
# free-threaded CPython 3.14t (scripts/freethreaded-python). Every
# step checks before it installs, so a second run changes nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

# rules_python >= 1.4 is in no registry here: the offline bazelrc takes it
# from ../shared/modules (next to the checkout), which this machine provides.
shared_rules_python=../shared/modules/rules_python-2.0.3
[[ -f $shared_rules_python/MODULE.bazel ]] || {
  echo "setup: $(cd .. && pwd)/shared/modules/rules_python-2.0.3 is missing: the offline build takes rules_python from there (third_party/offline/bazel.bazelrc)" >&2
  exit 1
}

# gcc, binutils and unzip: tests/host/import_test.sh builds loadable ROCm
# stand-ins on the host and reads the wheels' ELF files there. cmake, g++,
# msgpack-cxx and zstd: tests/host/kpack builds rocm-kpack's reference loader.
# make, pkg-config, xz-utils and the -dev packages: the free-threaded CPython
# (scripts/freethreaded-python) is built on the host, with the modules pip needs.
APT_PACKAGES=(mmdebstrap bubblewrap ca-certificates gcc binutils unzip cmake g++ libmsgpack-cxx-dev libzstd-dev
  make pkg-config xz-utils libssl-dev zlib1g-dev libffi-dev libbz2-dev liblzma-dev libsqlite3-dev libreadline-dev uuid-dev)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing apt packages: ${missing[*]}"
  SUDO=""
  [[ $(id -u) == 0 ]] || SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
fi

# The build root (minutes: mostly downloads and unpacking) is made while the
# venv and buildifier install; its output is shown once it is done.
root_log=$(mktemp "${TMPDIR:-/tmp}/rules_rocm-buildroot.XXXXXX")
scripts/buildroot --create >"$root_log" 2>&1 &
root_pid=$!
# The free-threaded CPython (minutes of compiling, once per machine) at the
# same time: the root's creation is mostly downloading and unpacking.
python_log=$(mktemp "${TMPDIR:-/tmp}/rules_rocm-python.XXXXXX")
scripts/freethreaded-python --ensure >"$python_log" 2>&1 &
python_pid=$!
trap 'kill "$root_pid" "$python_pid" 2>/dev/null || true; rm -f "$root_log" "$python_log"' EXIT

# The test tools' venv (BuildGrid needs Python >= 3.12). pyenv's interpreters
# are bound into the build root at the same path, so the venv works there.
PYENV_ROOT="${PYENV_ROOT:-$( (pyenv root) 2>/dev/null || echo "$HOME/.pyenv")}"
VENV_PY=""
for v in $(ls -d "$PYENV_ROOT"/versions/3.1[2-9]* 2>/dev/null | sort -V -r); do
  [[ -x $v/bin/python3 ]] && {
    VENV_PY=$v/bin/python3
    break
  }
done
[[ -n $VENV_PY ]] || { echo "setup: need a pyenv Python >= 3.12 for .venv (looked in $PYENV_ROOT/versions)" >&2; exit 1; }

REQ=tools/requirements-dev.txt
STAMP=.venv/.requirements.sha256
want=$( (echo "$VENV_PY"; cat "$REQ") | sha256sum | cut -d' ' -f1)
if [[ ! -x .venv/bin/python || ! -f $STAMP || $(cat "$STAMP") != "$want" ]]; then
  echo "setup: creating .venv with $VENV_PY"
  rm -rf .venv
  "$VENV_PY" -m venv .venv
  .venv/bin/python -m pip install -q --disable-pip-version-check -r "$REQ"
  echo "$want" >"$STAMP"
fi

if [[ ! -x node_modules/.bin/buildifier ]]; then
  echo "setup: installing buildifier from npm"
  npm ci --silent --no-audit --no-fund
fi

root_rc=0
wait "$root_pid" || root_rc=$?
python_rc=0
wait "$python_pid" || python_rc=$?
trap - EXIT
cat "$root_log" "$python_log"
rm -f "$root_log" "$python_log"
((root_rc == 0)) || exit "$root_rc"
((python_rc == 0)) || exit "$python_rc"

# rules_rust itself, from a file:// registry (rust_registry.sh; bound at
# /opt/rules_rocm_rust). The tool's crates need no cargo-bazel: their BUILD
# files are checked in (tools/3rdparty).
scripts/buildroot third_party/offline/rust_registry.sh "$(dirname "$(scripts/buildroot --path)")/rust"

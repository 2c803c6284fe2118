#!/usr/bin/env bash
# Idempotent prerequisites for `make wheels` / `make test` on Debian 12:
# apt packages, a Python venv with the test tools, buildifier from npm.
# Every step checks before it installs, so a second run does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  bazel-bootstrap bazel-platforms
  hipcc librocprim-dev libamdhip64-dev rocm-device-libs
  binutils patchelf zip unzip gcc libc6-dev util-linux iproute2
)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing apt packages: ${missing[*]}"
  SUDO=""; [[ $(id -u) == 0 ]] || SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
fi

command -v cargo >/dev/null || [[ -x $HOME/.cargo/bin/cargo ]] || {
  echo "setup: cargo not found; install Rust with rustup (https://rustup.rs)" >&2; exit 1; }

PYENV_ROOT="${PYENV_ROOT:-$( (pyenv root) 2>/dev/null || echo "$HOME/.pyenv")}"
VENV_PY=""
for v in $(ls -d "$PYENV_ROOT"/versions/3.1[2-9]* 2>/dev/null | sort -V -r); do
  [[ -x $v/bin/python3 ]] && { VENV_PY=$v/bin/python3; break; }
done
[[ -n $VENV_PY ]] || VENV_PY=$(command -v python3.12 || true)
[[ -n $VENV_PY ]] || { echo "setup: need Python >= 3.12 for .venv (looked in $PYENV_ROOT/versions)" >&2; exit 1; }

REQ=tools/requirements-dev.txt
STAMP=.venv/.requirements.sha256
want=$(sha256sum "$REQ" | cut -d' ' -f1)
if [[ ! -x .venv/bin/python || ! -f $STAMP || $(cat "$STAMP") != "$want" ]]; then
  echo "setup: creating .venv with $VENV_PY"
  [[ -x .venv/bin/python ]] || "$VENV_PY" -m venv .venv
  .venv/bin/python -m pip install -q --disable-pip-version-check -r "$REQ"
  echo "$want" > "$STAMP"
fi

if [[ ! -x node_modules/.bin/buildifier ]]; then
  echo "setup: installing buildifier from npm"
  npm ci --silent --no-audit --no-fund
fi

# --config=offline for this checkout (absolute paths: see .bazelrc).
root=$(pwd)
rc="# Written by scripts/setup.sh for $root; do not edit.
"
for cmd in build query fetch sync; do
  rc+="$cmd:offline --override_repository=remote_coverage_tools=$root/third_party/shims/remote_coverage_tools
"
  rc+="$cmd:offline --override_repository=rules_cc=$root/third_party/shims/rules_cc
$cmd:offline --override_repository=rules_java=$root/third_party/shims/rules_java
$cmd:offline --override_repository=platforms=/usr/share/bazel/tools/platforms
"
done
if [[ ! -f .bazelrc.offline || $(cat .bazelrc.offline) != "${rc%$'\n'}" ]]; then
  printf '%s' "$rc" > .bazelrc.offline.tmp && mv .bazelrc.offline.tmp .bazelrc.offline
fi

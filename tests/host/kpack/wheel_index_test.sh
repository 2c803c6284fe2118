#!/usr/bin/env bash
# The install docs/kpack.md and docs/rules/wheel_index.md give, run as
# written (in the build root, from the checkout):
#   bazel build --config=kpack --//:python_versions=3.12 //:wheel_index
#   pip download --no-deps --dest deps jax-rocm7-pjrt==0.10.2
#   pip install --index-url file://$PWD/bazel-bin/wheel_index --find-links deps "jax-rocm7-plugin[device-gfx1201]"
# into a fresh Python 3.12 venv: it must install the build's host wheel, its
# gfx1201 device wheel (whose archive is then in the host package's .kpack
# directory) and PyPI's jax-rocm7-pjrt, and no other device wheel. The
# `pip download` is the cached copy of the same file (tests/lib/pypi_wheel.sh).
# The index alone must not do: without the PJRT plugin the install fails,
# naming it (the reason the docs add --find-links).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../lib/common.sh"
source "$here/../../lib/pypi_wheel.sh"
VENV=${VENV:-$PWD/.venv}
cd "$(git -C "$here" rev-parse --show-toplevel)"
work=$(mktemp -d "$HOME/.cache/rules_rocm/wheel_index_test.XXXXXX")
trap 'rm -rf "$work"' EXIT

bazel build --config=kpack --//:python_versions=3.12 //:wheel_index
mkdir "$work/deps"
cp "$(cached_pjrt_wheel)" "$work/deps/"

py=$(ls "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12.*/bin/python3.12 | tail -1)
"$py" -m venv "$work/venv"
pip=("$work/venv/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir)

# The control: the index alone lacks jax-rocm7-pjrt.
if "${pip[@]}" --index-url "file://$PWD/bazel-bin/wheel_index" "jax-rocm7-plugin[device-gfx1201]" \
  >"$work/control.log" 2>&1; then
  fail "the index alone installed jax-rocm7-plugin, although it has no jax-rocm7-pjrt"
fi
expect_in "$work/control.log" "jax-rocm7-pjrt"

"${pip[@]}" --index-url "file://$PWD/bazel-bin/wheel_index" --find-links "$work/deps" \
  "jax-rocm7-plugin[device-gfx1201]" || fail "the documented install failed"
installed=$("$work/venv/bin/python" -c '
import importlib.metadata as m
print("\n".join(sorted(d.metadata["Name"] + " " + d.version for d in m.distributions() if d.metadata["Name"] != "pip")))')
echo "$installed"
expected="jax-rocm7-pjrt 0.10.2
jax-rocm7-plugin 0.10.2
jax-rocm7-plugin-device-gfx1201 0.10.2"
[[ $installed == "$expected" ]] || fail "installed:
$installed
expected:
$expected"
site=$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
ls "$site"/jax_rocm7_plugin/.kpack/*gfx1201*.kpack >/dev/null ||
  fail "no gfx1201 archive in $site/jax_rocm7_plugin/.kpack"
if ls "$site"/jax_rocm7_plugin/.kpack/ | grep -v gfx1201; then
  fail "archives for other targets were installed"
fi
echo "ok: the documented //:wheel_index install gives jax-rocm7-plugin, its gfx1201 device wheel and PyPI's jax-rocm7-pjrt"

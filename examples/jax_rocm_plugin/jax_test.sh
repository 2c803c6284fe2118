#!/usr/bin/env bash
# The jax-rocm7-plugin of `make wheels` (DIST) inside JAX 0.10.2, as a user
# installs it: for the build root's Python 3.14, a fresh venv,
# `pip install` of every DIST wheel for that Python (the examples' too) with
# jax==0.10.2, which takes jaxlib and, through the plugin's own
# Requires-Dist, PyPI's jax-rocm7-pjrt 0.10.2 (the real XLA). Then
# jax_check.py:
#   - the targets and types JAX queues for ROCM are the same names and API
#     versions as with PyPI's jax-rocm7-plugin in this wheel's place;
#   - jaxlib loads this wheel's seven kernel modules; jaxlib's _jax and
#     rocm_plugin_extension share one nanobind internals record;
#   - PyPI's PJRT plugin, loaded through its C API without a GPU, accepts
#     every queued target and type and the extension's ffi_handlers() and
#     ffi_types() through this wheel's rocm_plugin_extension; a non-handler
#     is refused;
#   - a CPU computation works.
# Control: with rocm_plugin_extension removed from the installed wheel the
# registration fails (JAX would log "rocm_plugin_extension is not found"
# and leave every target queued). The two ROCm libraries PyPI's plugin links
# and Debian has no package of (rocprofiler-sdk, rocm-smi 1) are link-and-
# load stand-ins (tests/host/stub_libs.py --missing-of). Runs in the build
# root (ROCm 7.2's libraries); needs PyPI.
set -euo pipefail
cd "$(dirname "$0")/../.."
dist=$(cd "${1:?usage: jax_test.sh DIST_DIR}" && pwd)
source tests/lib/common.sh
check=$PWD/examples/jax_rocm_plugin/jax_check.py
work=$(mktemp -d "${TMPDIR:-/tmp}/jax_test.XXXXXX")
trap 'rm -rf "$work"' EXIT
export PIP_DISABLE_PIP_VERSION_CHECK=1 JAX_PLATFORMS=cpu

# One version (JAX_TEST_PYTHONS names others): what differs between minor
# versions (tags, suffixes, the interpreter's headers) is checked for every
# declared version by //examples/jax_rocm_plugin:install_test, which imports
# all eight modules beside jaxlib; each version here costs a PyPI install of
# jax and jaxlib.
for py in ${JAX_TEST_PYTHONS:-python3.14}; do
  tag=$("$py" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
  wheel=$(ls "$dist"/jax_rocm7_plugin-0.10.2-"$tag"-"$tag"-*.whl 2>/dev/null) ||
    fail "$dist has no jax_rocm7_plugin wheel for $tag: run make wheels"
  venv=$work/$tag
  "$py" -m venv "$venv"
  # dist/ as a set, as users install it: this Python's wheels and the
  # Python-independent ones in one pip command with jax; pip resolves each
  # wheel's Requires-Dist (the examples' among dist/, jax-rocm7-pjrt 0.10.2
  # from PyPI) and refuses two wheels of one distribution.
  # Wheels for another CPU (the aarch64 tool wheel) are not for this one.
  set=()
  for w in "$dist"/*-"$tag"-"$tag"-*.whl "$dist"/*-py3-none-*.whl; do
    for_this_cpu "$w" && set+=("$w")
  done
  "$venv/bin/pip" install -q "${set[@]}" jax==0.10.2 >"$work/$tag.pip.log" 2>&1 ||
    fail "pip install of dist/'s ${#set[@]} wheels for $tag with jax==0.10.2: $(tail -5 "$work/$tag.pip.log")"
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
  "$venv/bin/python" - "$site" "${set[@]##*/}" <<'PY' || fail "$tag: pip did not install every wheel of dist/ as itself"
import importlib.metadata as md, sys
site, names = sys.argv[1], sys.argv[2:]
have = {(d.metadata["Name"].replace("-", "_").lower(), d.version) for d in md.distributions(path=[site])}
missing = [n for n in names if tuple(n.split("-")[:2]) not in have]
assert not missing, f"not installed as built: {missing}"
PY
  pjrt=$site/jax_plugins/xla_rocm7/xla_rocm_plugin.so
  [[ -f $pjrt ]] || fail "pip did not bring jax-rocm7-pjrt (its Requires-Dist): no $pjrt"
  pjrt_version=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("jax-rocm7-pjrt"))')
  [[ $pjrt_version == 0.10.2 ]] || fail "pip brought jax-rocm7-pjrt $pjrt_version, not 0.10.2"
  stubs=$work/$tag.stubs
  python3 tests/host/stub_libs.py --missing-of "$pjrt" "$stubs"

  # The same queue with PyPI's own plugin in this wheel's place.
  "$venv/bin/pip" download -q --no-deps --only-binary=:all: -d "$work/$tag.pypi" jax-rocm7-plugin==0.10.2
  "$venv/bin/pip" install -q --no-deps --target "$work/$tag.pypi/site" "$work/$tag.pypi"/*.whl
  ours=$("$venv/bin/python" "$check" queued "$site/jax_rocm7_plugin")
  theirs=$(PYTHONPATH=$work/$tag.pypi/site "$venv/bin/python" "$check" queued "$work/$tag.pypi/site/jax_rocm7_plugin")
  [[ $ours == "$theirs" ]] || fail "$tag: JAX queues other ROCM targets with this wheel than with PyPI's: $ours vs $theirs"
  echo "$tag: JAX queues $(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(len(d["calls"]), "targets and", len(d["types"]), "types")' "$ours") for ROCM, as with PyPI's plugin"

  LD_LIBRARY_PATH=$stubs "$venv/bin/python" "$check" register "$pjrt" | sed "s/^/$tag: /"

  # Control: without rocm_plugin_extension nothing reaches the plugin.
  mv "$site"/jax_rocm7_plugin/rocm_plugin_extension.*.so "$work/"
  if LD_LIBRARY_PATH=$stubs "$venv/bin/python" "$check" register "$pjrt" >"$work/$tag.control.log" 2>&1; then
    fail "$tag: the check passed without rocm_plugin_extension"
  fi
  expect_in "$work/$tag.control.log" "No module named 'jax_rocm7_plugin.rocm_plugin_extension'"
  echo "$tag: control: without rocm_plugin_extension the check fails"
done
echo "jax_test: ok"

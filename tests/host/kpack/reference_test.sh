#!/usr/bin/env bash
# The kpack wheels of `bazel build --config=kpack //:wheels` (KPACK_DIST)
# judged by rocm-kpack's own code, where users install them, on this host
# (Debian 12, outside the build root; no ROCm or GPU needed):
#   - its C++ runtime (../shared/third_party/rocm-kpack-e348328/runtime) is
#     built with CMake against Debian's msgpack-cxx and zstd;
#   - KPACK_DIST, built against Debian's ROCm (a system ROCm: its device
#     wheels pin no rocm-sdk-* package, which no index has for it), with a
#     stand-in for what it requires from elsewhere (PyPI's jax-rocm7-pjrt:
#     an empty wheel written by rocm-wheel build), becomes a package index
#     (`rocm-wheel index`) and pip installs from it alone;
#   - for each distribution with device code, `pip install
#     "<distribution>[device-gfx1201]"` into one fresh venv must install the
#     host wheel, the gfx1201 device wheel and the host's pins, nothing for
#     gfx1200 (a plain `jax-rocm7-plugin` installs no device wheel, and the
#     fat build's has no device extras); check_reference.py
#     hands every HIPK wrapper's marker to the reference loader, which must
#     find the gfx1201 code object through the search paths, byte-equal to
#     the one the fat build (FAT_DIST, `make wheels`) embeds, and must fail
#     for gfx1200, whose device wheel is not installed; kpack_open and
#     kpack_get_kernel read every archive;
#   - for jax_rocm7_plugin, the reference's own after-the-fact splitter
#     (ArtifactSplitter, run in the build root for clang-offload-bundler) is
#     applied to the fat wheel's package: the loader gives the same code
#     object for its transformed binaries as for the build's;
#   - `rocm-wheel thin --gfx gfx1201` of the split set keeps the host wheel
#     and the gfx1201 device wheel only;
#   - `rocm-wheel check` (the tool's own wheel from FAT_DIST, `make
#     tool-wheels`, pip-installed)
#     agrees: the host wheel with the gfx1201 device wheel resolves for
#     gfx1201 and is refused for gfx120X-all, naming gfx1200; its `inspect`
#     lists each binary's markers and the device wheel's archive, whose keys
#     are the markers' kernel names (#0), for gfx1201 only;
#   - with FAMILY_DIST and its EXEC_LOG (--//:device_wheel_level=family):
#     that build wrote three device wheels and gave three host wheels their
#     extras and variant wheels, nothing else; its index refuses to be merged with KPACK_DIST's
#     (one host wheel name, two different files); from its own index,
#     "jax_rocm7_plugin[device-gfx1201]" (an extra per target at every
#     level, AMD's rule) installs the one gfx12 device wheel,
#     which resolves, through the same loader, to the fat build's gfx1201
#     and gfx1200 code objects, and `rocm-wheel check` accepts the pair for
#     gfx120X-all; with SUB_FAMILY_DIST (--//:device_wheel_level=sub_family)
#     the same from its own index, through the one gfx12_0 device wheel;
#   - variant wheels (both builds use --//:wheel_variants): pip skips them
#     and the index's -variants.json file (its -vvv log says so) and
#     installs the plain host above; check_variants.py has variantlib with
#     rocm-bootstrap's provider validate them, write the same variants.json
#     as each build's index, and rank them, their markers selecting the gfx1201
#     device wheel (the family build's gfx12) for a gfx1201 and nothing for
#     a gfx1100 or no GPU; `rocm-wheel variant` refuses a label outside the
#     draft's rules and a gfx9999 device wheel, leaving no output.
set -euo pipefail
cd "$(dirname "$0")/../../.."
source tests/lib/common.sh
usage="usage: reference_test.sh FAT_DIST KPACK_DIST [FAMILY_DIST EXEC_LOG [SUB_FAMILY_DIST]]"
fat=$(cd "${1:?$usage}" && pwd)
kpack=$(cd "${2:?$usage}" && pwd)
family=${3:-}
exec_log=${4:-}
sub_family=${5:-}
[[ -z $family || -f $exec_log ]] || fail "$usage: no execution log '$exec_log'"
for tool in cmake g++; do
  command -v "$tool" >/dev/null || fail "$tool is missing: run scripts/setup.sh"
done
src=${ROCM_KPACK_SRC:-../shared/third_party/rocm-kpack-e348328}
[[ -f $src/runtime/CMakeLists.txt ]] || fail "rocm-kpack's sources are not in $src (set ROCM_KPACK_SRC)"
# Under ~/.cache: the build root sees it too (the reference splitter runs there).
mkdir -p "$HOME/.cache/rules_rocm"
tmp=$(mktemp -d "$HOME/.cache/rules_rocm/kpack_reference.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Debian 12's msgpack-cxx and zstd name their CMake targets differently from
# what rocm-kpack asks for: tests/host/kpack/cmake maps them.
cmake -S "$src" -B "$tmp/runtime" -DBUILD_TESTING=OFF -DBUILD_SHARED_LIBS=ON -DCMAKE_BUILD_TYPE=Release \
  -Dmsgpack-cxx_DIR="$PWD/tests/host/kpack/cmake/msgpack-cxx" -Dzstd_DIR="$PWD/tests/host/kpack/cmake/zstd" >"$tmp/cmake.log" 2>&1 &&
  cmake --build "$tmp/runtime" -j"$(nproc)" >>"$tmp/cmake.log" 2>&1 ||
  fail "building rocm-kpack's runtime failed: $(tail -20 "$tmp/cmake.log")"
runtime=$tmp/runtime/runtime/librocm_kpack.so
[[ -f $runtime ]] || fail "no $runtime after the CMake build"

# rocm-wheel as users get it (its wheel from the same build).
tool=("$fat"/rocm_wheel-*_x86_64.whl)
((${#tool[@]} == 1)) || fail "want one rocm_wheel wheel in $fat (make tool-wheels), found ${#tool[@]}"
python3 -m venv "$tmp/tool"
"$tmp/tool/bin/pip" install -q --disable-pip-version-check --no-index "${tool[0]}" || fail "pip install ${tool[0]##*/}"
rw=$tmp/tool/bin/rocm-wheel

# pinned WHEEL NAME: the version WHEEL's METADATA pins NAME to (Requires-Dist: NAME==V).
pinned() {
  python3 - "$@" <<'PY'
import sys, zipfile
whl, name = sys.argv[1:]
z = zipfile.ZipFile(whl)
(md,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
for line in z.read(md).decode().splitlines():
    if line.startswith("Requires-Dist: %s==" % name):
        print(line.split("==", 1)[1].split(";")[0].strip())
        sys.exit(0)
sys.exit("%s does not pin %s" % (whl, name))
PY
}

# stand_in NAME VERSION: an empty wheel of NAME VERSION in $tmp/stand-ins.
stand_in() {
  mkdir -p "$tmp/stand-ins" "$tmp/manifests"
  printf '{"distribution": "%s", "version": "%s", "tags": ["py3-none-any"], "files": []}\n' "$1" "$2" >"$tmp/manifests/$1.json"
  "$rw" build --manifest "$tmp/manifests/$1.json" --output "$tmp/stand-ins/${1//-/_}-$2-py3-none-any.whl" >/dev/null ||
    fail "rocm-wheel build of the stand-in $1 $2"
}

# installed VENV: the distributions in VENV (normalised names, sorted), pip's own left out.
installed() {
  "$1/bin/python" - <<'PY'
import importlib.metadata as md, re
names = {re.sub(r"[-_.]+", "-", d.metadata["Name"]).lower() for d in md.distributions()}
print(" ".join(sorted(names - {"pip", "setuptools"})))
PY
}

# pip_from INDEX VENV REQUIREMENT: pip installs REQUIREMENT into VENV from INDEX and nothing else.
pip_from() {
  "$2/bin/pip" install -q --disable-pip-version-check --no-cache-dir --index-url "file://$1" "$3" >"$tmp/pip.log" 2>&1 ||
    fail "pip install \"$3\" from ${1##*/}: $(tail -5 "$tmp/pip.log")"
}

# The reference's after-the-fact split of the fat jax_rocm7_plugin package
# (TheRock's artifact layout: a manifest naming the prefix directory).
split_fat() {
  local wheel=$1 package=$2 out=$3
  mkdir -p "$out/in"
  unzip -q "$wheel" "$package/*" -d "$out/in"
  echo "$package" >"$out/in/artifact_manifest.txt"
  scripts/buildroot env PYTHONPATH=/opt/rules_rocm_shared/third_party/rocm-kpack-e348328/python \
    .venv/bin/python tests/host/kpack/split_reference.py "$out/in" "$out/split" >"$out/split.log" 2>&1 ||
    fail "the reference splitter failed on ${wheel##*/}: $(tail -5 "$out/split.log")"
  # The generic (host) tree plus the archives, as pip would install both.
  cp -r "$out/split/ref_generic" "$out/tree"
  for d in "$out"/split/ref_gfx*/; do cp -r "$d/$package/.kpack" "$out/tree/$package/"; done
}

py=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12.*/bin/python3.12 2>/dev/null | sort -V | tail -1)
[[ -n $py ]] || fail "pyenv has no Python 3.12"
cp=cp312
shopt -s nullglob
checked=0

# What the split set pins from elsewhere, as stand-ins; then the index.
# Plain wheels end in the platform tag (*_x86_64.whl), variant wheels in their label.
stand_in jax-rocm7-pjrt "$(pinned "$(ls "$kpack"/jax_rocm7_plugin-*-"$cp"-"$cp"-*_x86_64.whl)" jax-rocm7-pjrt)"
# Built against a system ROCm: no device wheel pins TheRock's SDK.
for whl in "$kpack"/*_device_*.whl ${family:+"$family"/*_device_*.whl}; do
  ! unzip -p "$whl" '*.dist-info/METADATA' | grep -q '^Requires-Dist: rocm-sdk' ||
    fail "${whl##*/} pins a rocm-sdk package, built against Debian's ROCm: $(unzip -p "$whl" '*.dist-info/METADATA' | grep '^Requires-Dist: rocm-sdk')"
done
# AMD's torch split set beside ours, in the same index (amd_split_set.py:
# rocm-kpack's splitter conventions, rocm-bootstrap's names), with TheRock's
# `rocm` selector sdist and SDK stand-ins at one pre-release.
sdk=7.13.0a20261201
.venv/bin/python tests/host/kpack/amd_split_set.py "$tmp/amd" --rocm-wheel "$rw" --sdk "$sdk" >"$tmp/amd.log" ||
  fail "amd_split_set.py: $(tail -5 "$tmp/amd.log")"
index=$tmp/index
start=$SECONDS
"$rw" index -o "$index" "$kpack" "$tmp/stand-ins" "$tmp/amd" >/dev/null || fail "rocm-wheel index of $kpack and the AMD set"
echo "kpack reference: index of $(ls "$kpack" | wc -l) wheels and the stand-ins in $((SECONDS - start)) s"
venv=$tmp/venv-plain
"$py" -m venv "$venv"
pip_from "$index" "$venv" jax-rocm7-plugin
[[ $(installed "$venv") == "jax-rocm7-pjrt jax-rocm7-plugin" ]] ||
  fail "a plain jax-rocm7-plugin from the index installed: $(installed "$venv")"
# The fat build's wheels have all their device code: no device extras.
fat_metadata=$(unzip -p "$(ls "$fat"/jax_rocm7_plugin-*-"$cp"-"$cp"-*.whl)" '*.dist-info/METADATA')
[[ $fat_metadata != *"Provides-Extra: device-"* ]] || fail "the fat jax_rocm7_plugin wheel offers device extras"
# distribution (file-name spelling), the package directory holding its
# binaries and its device wheels' prefix (example_rocm_plugin's is
# AMD-shaped: amd-<host>-device, the wheel rule's device_prefix)
for triple in jax_rocm7_plugin:jax_rocm7_plugin: example_rocm_plugin:example_rocm_plugin:amd_ example_rocm7_pjrt:jax_plugins/example_rocm7:; do
  IFS=: read -r dist package amd <<<"$triple"
  prefix=$amd${dist}_device
  host=("$kpack/$dist"-*-"$cp"-"$cp"-*_x86_64.whl "$kpack/$dist"-*-py3-none-*_x86_64.whl)
  device=("$kpack/${prefix}_gfx1201"-*.whl)
  fatw=("$fat/$dist"-*-"$cp"-"$cp"-*.whl "$fat/$dist"-*-py3-none-*.whl)
  ((${#host[@]} == 1)) || fail "want one $dist host wheel for $cp in $kpack, found ${#host[@]}"
  ((${#device[@]} == 1)) || fail "want one ${prefix}_gfx1201 wheel in $kpack, found ${#device[@]}"
  ((${#fatw[@]} == 1)) || fail "want one $dist wheel for $cp in $fat, found ${#fatw[@]}"
  venv=$tmp/venv-$dist
  "$py" -m venv "$venv"
  pip_from "$index" "$venv" "$dist[device-gfx1201]"
  got=$(installed "$venv")
  project=${dist//_/-}
  [[ " $got " == *" $project "* && " $got " == *" ${prefix//_/-}-gfx1201 "* && $got != *rocm-sdk* &&
    $got != *gfx1200* ]] || fail "\"$dist[device-gfx1201]\" from the index installed: $got"
  if [[ $dist == jax_rocm7_plugin ]]; then
    [[ $got == "jax-rocm7-pjrt jax-rocm7-plugin jax-rocm7-plugin-device-gfx1201" ]] ||
      fail "\"$dist[device-gfx1201]\" from the index installed: $got"
  fi
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
  echo "kpack reference: $dist (${host[0]##*/} + ${device[0]##*/})"
  reference=()
  if [[ $dist == jax_rocm7_plugin ]]; then
    split_fat "${fatw[0]}" "$package" "$tmp/split-$dist"
    reference=("$tmp/split-$dist/tree")
  fi
  PYTHONPATH=$src/python .venv/bin/python tests/host/kpack/check_reference.py "$runtime" "$site" "$package" "${fatw[0]}" gfx1201 gfx1200 "${reference[@]}" ||
    fail "$dist: the reference loader disagrees with the build"
  "$rw" check "${host[0]}" --device-wheel "${device[0]}" || fail "rocm-wheel check refuses ${host[0]##*/} with ${device[0]##*/}"
  # Thinning the split set to gfx1201 chooses that device wheel alone.
  mkdir "$tmp/thin-$dist"
  "$rw" thin --gfx gfx1201 "${host[0]}" -o "$tmp/thin-$dist/${host[0]##*/}" \
    --device-wheel "$kpack/${prefix}_gfx1200"-*.whl --device-wheel "${device[0]}" >"$tmp/thin.log" ||
    fail "rocm-wheel thin of the $dist split set"
  [[ $(ls "$tmp/thin-$dist") == "$(printf '%s\n' "${host[0]##*/}" "${device[0]##*/}" | sort)" ]] ||
    fail "thin --gfx gfx1201 of the $dist split set gave: $(ls "$tmp/thin-$dist")"
  expect_failure "$tmp/check.log" "$rw" check "${host[0]}" --device-wheel "${device[0]}" --gfx gfx120X-all
  expect_in "$tmp/check.log" "has no gfx1200 code"
  "$rw" inspect --json "${host[0]}" >"$tmp/host.json" && "$rw" inspect --json "${device[0]}" >"$tmp/device.json" ||
    fail "rocm-wheel inspect ${host[0]##*/} ${device[0]##*/}"
  python3 - "$tmp/host.json" "$tmp/device.json" <<'PY' || fail "$dist: rocm-wheel inspect's markers and archive disagree"
import json, sys
host, device = (json.load(open(p)) for p in sys.argv[1:3])
names = {m["kernel_name"] + "#0" for e in host["elf_files"] for m in e["kpack_markers"]}
assert names, "no kpack markers listed in the host wheel"
assert not any(e["bundles"] for e in host["elf_files"]), "the host wheel still has offload bundles"
(archive,) = device["kpack_archives"]
assert archive["targets"] == ["gfx1201"], archive["targets"]
keys = {k["key"] for k in archive["kernels"]}
assert names == keys, "markers %s, archive keys %s" % (sorted(names), sorted(keys))
print("ok: inspect: %d markers, the archive's %d keys" % (len(names), len(keys)))
PY
  checked=$((checked + 1))
done
echo "kpack reference: AMD's torch split set ($sdk)"
amd_host=("$tmp/amd"/torch-*.whl)
amd_devices=("$tmp/amd"/amd_torch_device_*.whl)
((${#amd_host[@]} == 1 && ${#amd_devices[@]} == 3)) || fail "amd_split_set.py wrote $(ls "$tmp/amd")"
with_devices() { local d; for d in "$@"; do printf -- '--device-wheel\n%s\n' "$d"; done; }
mapfile -t amd_args < <(with_devices "${amd_devices[@]}")
# Our tools read it: any prefix, a chain, xnack archives in the bare
# target's wheel, group-prefixed archives, per-Python tags, +rocm versions.
"$rw" check "${amd_host[0]}" "${amd_args[@]}" >"$tmp/amd-check.log" ||
  fail "rocm-wheel check refuses AMD's set: $(cat "$tmp/amd-check.log")"
expect_in "$tmp/amd-check.log" "resolve for gfx1200,gfx1201,gfx942:xnack+,gfx942:xnack-"
"$rw" inspect --json "${amd_host[0]}" >"$tmp/amd-host.json" || fail "rocm-wheel inspect ${amd_host[0]##*/}"
expect_in "$tmp/amd-host.json" '"../.kpack/rccl_lib_@GFXARCH@.kpack"' '"../.kpack/torch_@GFXARCH@.kpack"'
for pair in "gfx1201:amd_torch_device_gfx12 amd_torch_device_gfx1201" "gfx942:amd_torch_device_gfx942"; do
  gfx=${pair%%:*}
  rm -rf "$tmp/amd-thin" && mkdir "$tmp/amd-thin"
  "$rw" thin --gfx "$gfx" "${amd_host[0]}" -o "$tmp/amd-thin/${amd_host[0]##*/}" "${amd_args[@]}" >/dev/null ||
    fail "rocm-wheel thin --gfx $gfx of AMD's set"
  # The target's wheel and what its extra pulls (gfx1201's chain: gfx12).
  [[ $(ls "$tmp/amd-thin" | cut -d- -f1 | grep -v '^torch$' | tr '\n' ' ') == "${pair#*:} " ]] ||
    fail "thin --gfx $gfx of AMD's set kept $(ls "$tmp/amd-thin")"
done
# TheRock#5446: one group's archives missing from the device wheels.
.venv/bin/python tests/host/kpack/amd_split_set.py "$tmp/amd-drop" --rocm-wheel "$rw" --sdk "$sdk" --drop-group rccl_lib >/dev/null ||
  fail "amd_split_set.py --drop-group"
mapfile -t drop_args < <(with_devices "$tmp/amd-drop"/amd_torch_device_*.whl)
expect_failure "$tmp/amd-drop.log" "$rw" check "$tmp/amd-drop"/torch-*.whl "${drop_args[@]}"
expect_in "$tmp/amd-drop.log" "torch/lib/librccl.so: archive group rccl_lib has no code for gfx1200, gfx1201, gfx942:xnack+, gfx942:xnack-"
! grep -q libtorch_hip "$tmp/amd-drop.log" || fail "check blamed libtorch_hip.so, whose archives are there: $(cat "$tmp/amd-drop.log")"
# Refused: a device wheel of another build's version, one no host requires.
.venv/bin/python tests/host/kpack/amd_split_set.py "$tmp/amd-other" --rocm-wheel "$rw" --sdk 7.13.0a20261202 >/dev/null ||
  fail "amd_split_set.py at another SDK"
expect_failure "$tmp/amd-version.log" "$rw" check "${amd_host[0]}" --device-wheel "$(ls "$tmp/amd-other"/amd_torch_device_gfx1201-*.whl)"
expect_in "$tmp/amd-version.log" "is not the device wheel torch 2.9.0+rocm$sdk requires (amd-torch-device-gfx1201==2.9.0+rocm$sdk)"
jax_host=$(ls "$kpack"/jax_rocm7_plugin-*-"$cp"-"$cp"-*_x86_64.whl)
rm -rf "$tmp/amd-thin" && mkdir "$tmp/amd-thin"
expect_failure "$tmp/amd-foreign.log" "$rw" thin --gfx gfx1201 "$jax_host" -o "$tmp/amd-thin/${jax_host##*/}" \
  --device-wheel "$(ls "$tmp/amd"/amd_torch_device_gfx1201-*.whl)"
expect_in "$tmp/amd-foreign.log" "amd-torch-device-gfx1201 is not a device wheel of jax-rocm7-plugin"
[[ -z $(ls "$tmp/amd-thin") ]] || fail "a refused thin wrote $(ls "$tmp/amd-thin")"
# One index, both sets, one GPU target: pip and uv.
want="amd-torch-device-gfx12 amd-torch-device-gfx1201 jax-rocm7-pjrt jax-rocm7-plugin jax-rocm7-plugin-device-gfx1201 rocm rocm-bootstrap rocm-sdk-core rocm-sdk-device-gfx1201 rocm-sdk-libraries torch"
venv=$tmp/venv-both
"$py" -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check --no-cache-dir --pre --index-url "file://$index" \
  "torch[device-gfx1201]" "jax_rocm7_plugin[device-gfx1201]" >"$tmp/pip.log" 2>&1 || fail "pip install of both sets: $(tail -5 "$tmp/pip.log")"
[[ $(installed "$venv") == "$want" ]] || fail "pip installed $(installed "$venv"), want $want"
.venv/bin/uv venv -q -p "$py" "$tmp/venv-uv" || fail "uv venv"
.venv/bin/uv pip install -q --python "$tmp/venv-uv/bin/python" --no-cache --prerelease allow --index-url "file://$index" \
  "torch[device-gfx1201]" "jax_rocm7_plugin[device-gfx1201]" >"$tmp/uv.log" 2>&1 || fail "uv pip install of both sets: $(tail -5 "$tmp/uv.log")"
[[ $(installed "$tmp/venv-uv") == "$want" ]] || fail "uv installed $(installed "$tmp/venv-uv"), want $want"
echo "ok: AMD's set read, thinned, its missing group named; pip and uv install it beside ours from one index"

# level_installs LEVEL DIST BUNDLE: from DIST's own index (with the
# stand-ins), "jax_rocm7_plugin[device-gfx1201]" installs the one device
# wheel of BUNDLE (the user names the GPU, not the bundle), which resolves
# through the reference loader to the fat build's gfx1201 and gfx1200 code
# objects; `rocm-wheel check` accepts the pair for gfx120X-all.
level_installs() {
  local level=$1 dist=$2 bundle=$3 host device fatw venv extras site target
  "$rw" index -o "$tmp/index-$level" "$dist" "$tmp/stand-ins" >/dev/null || fail "rocm-wheel index of $dist"
  host=("$dist"/jax_rocm7_plugin-*-"$cp"-"$cp"-*_x86_64.whl)
  device=("$dist"/jax_rocm7_plugin_device_"$bundle"-*.whl)
  ((${#device[@]} == 1)) || fail "want one jax_rocm7_plugin_device_$bundle wheel in $dist, found ${#device[@]}"
  fatw=("$fat"/jax_rocm7_plugin-*-"$cp"-"$cp"-*.whl)
  venv=$tmp/venv-$level
  "$py" -m venv "$venv"
  extras=$(unzip -p "${host[0]}" '*.dist-info/METADATA' | sed -n 's/^Provides-Extra: \(device-\)/\1/p' | tr '\n' ' ')
  [[ $extras == "device-gfx1200 device-gfx1201 device-all " ]] || fail "the $level build's host offers the extras: $extras"
  pip_from "$tmp/index-$level" "$venv" "jax_rocm7_plugin[device-gfx1201]"
  [[ $(installed "$venv") == "jax-rocm7-pjrt jax-rocm7-plugin jax-rocm7-plugin-device-${bundle//_/-}" ]] ||
    fail "\"jax_rocm7_plugin[device-gfx1201]\" from the $level index installed: $(installed "$venv")"
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
  for target in gfx1201 gfx1200; do
    PYTHONPATH=$src/python .venv/bin/python tests/host/kpack/check_reference.py "$runtime" "$site" jax_rocm7_plugin "${fatw[0]}" "$target" gfx1100 ||
      fail "jax_rocm7_plugin with ${device[0]##*/}: the reference loader disagrees with the build for $target"
  done
  "$rw" check "${host[0]}" --device-wheel "${device[0]}" --gfx gfx120X-all || fail "rocm-wheel check refuses ${device[0]##*/} for gfx120X-all"
}

if [[ -n $family ]]; then
  echo "kpack reference: per-family device wheels ($family)"
  PYTHONPATH=tests/lib python3 - "$exec_log" <<'PY' || fail "the --//:device_wheel_level=family build did more than write device wheels"
import sys
from exec_log import outputs, read_spawns
spawns = read_spawns(sys.argv[1])
got = sorted((s["mnemonic"], o.rsplit("/", 1)[-1]) for s in spawns for o in outputs(s))
want = ["RocmWheel"] * 3 + ["RocmWheelDeviceExtras"] * 3 + ["RocmWheelVariant"] * 3
assert [m for m, _ in got] == want, "want 3 device wheels, 3 hosts' extras and their variant wheels, got %s" % got
assert all("_device_gfx12-" in name for m, name in got if m == "RocmWheel"), got
assert not any("_device_" in name for m, name in got if m == "RocmWheelDeviceExtras"), got
assert all(name.endswith("-rocm.whl") for m, name in got if m == "RocmWheelVariant"), got
print("ok: the level wrote %s and nothing else" % ", ".join(n for _, n in got))
PY
  expect_failure "$tmp/clash.log" "$rw" index -o "$tmp/index-both" "$kpack" "$family"
  expect_in "$tmp/clash.log" "two different wheels named " "an index serves one file per name"
  [[ ! -e $tmp/index-both ]] || fail "a refused index left $tmp/index-both"
  level_installs family "$family" gfx12
fi
if [[ -n $sub_family ]]; then
  echo "kpack reference: per-sub-family device wheels ($sub_family)"
  level_installs sub_family "$sub_family" gfx12_0
fi

echo "kpack reference: variant wheels"
start=$SECONDS
variants=("$kpack"/*-rocm.whl)
((${#variants[@]} == 3)) || fail "want 3 variant wheels (*-rocm.whl) in $kpack (--//:wheel_variants), found ${#variants[@]}"
"$tmp/venv-plain/bin/pip" download -vvv --no-deps --disable-pip-version-check --no-cache-dir -d "$tmp/download" \
  --index-url "file://$index" jax-rocm7-plugin >"$tmp/pip-vvv.log" 2>&1 || fail "pip download jax-rocm7-plugin: $(tail -5 "$tmp/pip-vvv.log")"
expect_match "$tmp/pip-vvv.log" "Skipping link: invalid wheel filename: .*/jax_rocm7_plugin-[^ ]*-rocm\.whl" \
  "Skipping link: unsupported archive format: \.json: .*/jax_rocm7_plugin-[^ ]*-variants\.json"
[[ $(ls "$tmp/download") == jax_rocm7_plugin-*-"$cp"-"$cp"-manylinux_2_28_x86_64.whl ]] ||
  fail "pip took $(ls "$tmp/download") from an index with variant wheels"
.venv/bin/python tests/host/kpack/check_variants.py "$tmp/variantlib" "$index" "$kpack" ${family:+"$tmp/index-family" "$family"} ||
  fail "variantlib disagrees with the variant wheels"
host=$(ls "$kpack"/jax_rocm7_plugin-*-"$cp"-"$cp"-*_x86_64.whl)
version=$(unzip -p "$host" '*.dist-info/METADATA' | sed -n 's/^Version: //p')
platform=${host##*-}
mkdir -p "$tmp/gfx9999" "$tmp/refused"
printf 'not a code object' >"$tmp/gfx9999/k.co"
"$rw" kpack archive --group jax_rocm7_plugin --family gfx9999 --target gfx9999 --compression none \
  --kernel "k#0@gfx9999=$tmp/gfx9999/k.co" --output "$tmp/gfx9999/gfx9999.kpack" >/dev/null || fail "rocm-wheel kpack archive for gfx9999"
printf '{"distribution": "jax-rocm7-plugin-device-gfx9999", "version": "%s", "tags": ["py3-none-%s"], "metadata": {"requires_dist": ["jax-rocm7-plugin==%s"]}, "files": [{"path": "jax_rocm7_plugin/.kpack/gfx9999.kpack", "src": "%s"}]}\n' \
  "$version" "${platform%.whl}" "$version" "$tmp/gfx9999/gfx9999.kpack" >"$tmp/gfx9999/device.json"
gfx9999=$tmp/gfx9999/jax_rocm7_plugin_device_gfx9999-$version-py3-none-$platform
"$rw" build --manifest "$tmp/gfx9999/device.json" --output "$gfx9999" >/dev/null || fail "rocm-wheel build of the gfx9999 device wheel"
out=$tmp/refused/$(basename "$host" .whl)
expect_failure "$tmp/refused.log" "$rw" variant "$host" -o "$out-rocm.whl" --label rocm --device-wheel "$gfx9999"
expect_in "$tmp/refused.log" "serves gfx9999, which rocm-bootstrap's amd provider does not know"
expect_failure "$tmp/refused.log" "$rw" variant "$host" -o "$out-ROCm-7.whl" --label ROCm-7 \
  --device-wheel "$(ls "$kpack"/jax_rocm7_plugin_device_gfx1201-*.whl)"
expect_in "$tmp/refused.log" 'invalid variant label "ROCm-7"'
[[ -z $(ls -A "$tmp/refused") ]] || fail "a refused variant left $(ls "$tmp/refused")"
echo "kpack reference: variant wheels checked in $((SECONDS - start)) s"
echo "PASS: rocm-kpack's loader resolves the kpack wheels of $checked distributions to the fat build's code objects"

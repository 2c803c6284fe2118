#!/usr/bin/env bash
# A ROCm toolkit from TheRock's pip SDK, and a split set pinned to it next
# to AMD's torch. A stand-in SDK at one pre-release (tests/lib/pip_sdk.py:
# the build root's ROCm in TheRock's pip layout, rocm-sdk-devel's
# _devel.tar linking rocm-sdk-core's HIP runtime) is served on 127.0.0.1
# and declared by URL + sha256 in a scratch module:
#  1. the pjrt example built with --hip_device_code=kpack against it: its
#     gfx1201 code object is byte-equal to the one the same sources give
#     with `local` (the same clang and device libraries underneath) but for
#     clang's __hip_cuid_<hash> symbol, a hash of the compile's command
#     line, which names each toolkit's paths; its
#     device wheel pins rocm-sdk-device-gfx1201 at exactly the SDK's
#     version, pre-release part and all, and its host offers the
#     device-gfx1201 extra;
#  2. one index (rocm-wheel index), served over HTTP on 127.0.0.1 by a
#     server that content-negotiates as PyPI does (PEP 691), holds
#     that set, the SDK, an AMD-shaped
#     torch set at the same SDK (tests/host/kpack/amd_split_set.py) and
#     TheRock's `rocm` selector sdist: `pip install --pre
#     "torch[device-gfx1201]" "example-rocm7-pjrt[device-gfx1201]"`
#     resolves with one rocm-sdk-device-gfx1201, and so does `uv pip
#     install`, each reading the index's PEP 691 JSON pages (the server's
#     log says which form it answered); in pip's venv every ROCm DT_NEEDED of the example's .so
#     files resolves from site-packages/_rocm_sdk_core/lib, with no
#     LD_LIBRARY_PATH;
#  3. a pip SDK whose wheels disagree on the version is refused, naming
#     them.
set -euo pipefail
source "$(dirname "$0")/../lib/scratch_test.sh"
sdk=7.13.0a20261201
ws=$(mktemp -d "${TMPDIR:-/tmp}/pip_sdk.XXXXXX")
ob="$ws/ob"
server=""
index_server=""
cleanup() {
  [[ -n $server ]] && kill "$server" 2>/dev/null
  [[ -n $index_server ]] && kill "$index_server" 2>/dev/null
  (cd "$ws/main" 2>/dev/null && "$BAZEL" --output_base="$ob" shutdown >/dev/null 2>&1) || true
  rm -rf "$ws"
}
trap cleanup EXIT

echo "--- a stand-in TheRock pip SDK $sdk from the build root's ROCm"
mkdir -p "$ws/serve/other"
python3 "$root/tests/lib/pip_sdk.py" "$ws/serve" --version "$sdk" >"$ws/sdk.txt" || fail "pip_sdk.py"
python3 "$root/tests/lib/pip_sdk.py" "$ws/serve/other" --version 7.13.0a20261202 --targets gfx1201 >"$ws/other.txt" || fail "pip_sdk.py (another version)"
read -r server port <<<"$(serve_directory "$ws/serve" "$ws/http.log")"
# wheels_of LIST [DIR]: the toolkit's wheels = {sha256: [url]} (core, libraries, devel).
wheels_of() {
  grep -E '^rocm_sdk_(core|libraries|devel)-' "$1" | while read -r name sha; do
    printf '        "%s": ["http://127.0.0.1:%s/%s%s"],\n' "$sha" "$port" "${2:+$2/}" "$name"
  done
}
mixed=$(wheels_of "$ws/sdk.txt" | grep -v rocm_sdk_core-; wheels_of "$ws/other.txt" other | grep rocm_sdk_core-)

mkdir -p "$ws/main"
cd "$ws/main"
scratch_module pip_sdk_probe "$root"
use_prebuilt_tool "$root" || fail "no rocm-wheel to use as a prebuilt tool"
cat >>MODULE.bazel <<EOF
rocm = use_extension("@rules_rocm//rules:extensions.bzl", "rules_rocm")
rocm.toolkit(
    name = "therock_pip",
    wheels = {
$(wheels_of "$ws/sdk.txt")
    },
)
rocm.toolkit(
    name = "mixed_pip",
    wheels = {
$mixed
    },
)
EOF
cat >>.bazelrc <<RC
build $(shared_disk_cache)
build --@rules_rocm//:gfx=gfx1201 --@rules_rocm//:hip_device_code=kpack
RC
touch BUILD.bazel
RW="$(cd "$root" && rocm_wheel_path)"

echo "--- 1. the pjrt example against the pip SDK and against local"
pip=(--@rules_rocm//rocm:toolkit=therock_pip)
# The toolkit is a command-line flag: both builds write the code object to
# one path (kept aside after each).
for toolkit in local therock_pip; do
  bz build --remote_download_outputs=all --@rules_rocm//rocm:toolkit=$toolkit @rules_rocm//examples/pjrt:wheel 2>"$ws/build.err" ||
    { tail -40 "$ws/build.err" >&2; fail "the pjrt example on $toolkit"; }
  co=$(find "$(bz info output_path 2>/dev/null)" -path '*examples/pjrt*' -name 'vector_add.hip.gfx1201.co')
  [[ $(wc -l <<<"$co") == 1 && -f $co ]] || fail "want one gfx1201 code object of vector_add.hip, found: $co"
  cp "$co" "$ws/$toolkit.co"
done
# Byte for byte but for clang's __hip_cuid_<hash> symbol (the hash is of
# the compile's command line, which names each toolkit's paths): its name
# in the string tables and the ELF hash tables of the dynamic symbols'
# names. Every section is compared, those as well with the name masked.
python3 - "$ws/local.co" "$ws/therock_pip.co" <<'PY' || fail "the gfx1201 code objects of the pip SDK and local differ"
import re, struct, sys
cuid = re.compile(rb"__hip_cuid_[0-9a-f]{16}")

def sections(data):
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = heads[shstrndx]
    out = {}
    for name, kind, flags, addr, off, size, *_ in heads:
        label = data[names[4] + name:].split(b"\0", 1)[0].decode()
        out[label] = (kind, addr, size, data[off:off + size] if kind != 8 else b"")
    return data[:0x40], out

a, b = (open(p, "rb").read() for p in sys.argv[1:])
if a == b:
    sys.exit(print("ok: byte-equal"))
assert len(a) == len(b), "sizes %d and %d" % (len(a), len(b))
(ha, sa), (hb, sb) = sections(a), sections(b)
assert ha == hb and sa.keys() == sb.keys(), "ELF headers or section lists differ"
differ = []
for name in sa:
    x, y = sa[name], sb[name]
    if x == y:
        continue
    masked = [cuid.sub(b"__hip_cuid_" + b"0" * 16, v[3]) for v in (x, y)]
    if name in (".hash", ".gnu.hash") or (x[:3] == y[:3] and masked[0] == masked[1]):
        differ.append(name)
        continue
    sys.exit("section %s differs beyond the __hip_cuid_ name" % name)
assert differ and set(differ) <= {".dynstr", ".strtab", ".hash", ".gnu.hash"}, differ
print("ok: equal but for %s / %s in %s" % (cuid.search(a).group().decode(), cuid.search(b).group().decode(), ", ".join(differ)))
PY
files=$(bz cquery "${pip[@]}" --output=files @rules_rocm//examples/pjrt:wheel 2>/dev/null)
exec_root=$(bz info execution_root 2>/dev/null)
mkdir "$ws/dist"
for f in $files; do cp "$exec_root/$f" "$ws/dist/"; done
device=("$ws/dist"/example_rocm7_pjrt_device_gfx1201-*.whl)
host=("$ws/dist"/example_rocm7_pjrt-*.whl)
((${#device[@]} == 1 && ${#host[@]} == 1)) || fail "the kpack pjrt wheels: $(ls "$ws/dist")"
unzip -p "${device[0]}" '*.dist-info/METADATA' >"$ws/device.txt"
expect_in "$ws/device.txt" "Requires-Dist: rocm-sdk-device-gfx1201==$sdk"
unzip -p "${host[0]}" '*.dist-info/METADATA' >"$ws/host.txt"
expect_in "$ws/host.txt" 'Requires-Dist: example-rocm7-pjrt-device-gfx1201==0.7.1; extra == "device-gfx1201"'
echo "ok: code objects byte-equal to local's; the device wheel pins rocm-sdk-device-gfx1201==$sdk"

echo "--- 2. one index: our set, the SDK, AMD's torch, the rocm selector"
"$root/.venv/bin/python" "$root/tests/host/kpack/amd_split_set.py" "$ws/amd" --rocm-wheel "$RW" --sdk "$sdk" --python 3.13 >"$ws/amd.log" ||
  fail "amd_split_set.py: $(tail -5 "$ws/amd.log")"
# AMD's stand-ins for the SDK are the served SDK's here.
rm "$ws/amd"/rocm_sdk_*.whl
"$RW" index -o "$ws/index" "$ws/dist" "$ws/amd" "$ws/serve"/rocm_sdk_*.whl >/dev/null || fail "rocm-wheel index"
read -r index_server index_port <<<"$(serve_with "$ws/index.out" python3 -u "$root/tests/lib/simple_index_server.py" "$ws/index" "$ws/pages.log")"
index_url=http://127.0.0.1:$index_port/
# read_json CLIENT: the client read JSON pages of both sets, and no HTML.
read_json() {
  expect_in "$ws/pages.log" "json /torch/" "json /example-rocm7-pjrt/" "json /rocm-sdk-device-gfx1201/"
  ! grep -q '^html' "$ws/pages.log" || fail "$1 read HTML pages: $(grep '^html' "$ws/pages.log" | head -3)"
  : >"$ws/pages.log"
}
# Control: a client that asks for HTML gets HTML, and the log says so.
python3 -c 'import sys, urllib.request as u
u.urlopen(u.Request(sys.argv[1] + "torch/", headers={"Accept": "text/html"})).read()' "$index_url" || fail "GET torch/ as HTML"
expect_in "$ws/pages.log" "html /torch/"
: >"$ws/pages.log"
want="amd-torch-device-gfx12 amd-torch-device-gfx1201 example-rocm7-pjrt example-rocm7-pjrt-device-gfx1201 rocm rocm-bootstrap rocm-sdk-core rocm-sdk-device-gfx1201 rocm-sdk-libraries torch"
installed() {
  "$1/bin/python" -c 'import importlib.metadata as md, re
print(" ".join(sorted({re.sub(r"[-_.]+", "-", d.metadata["Name"]).lower() for d in md.distributions()} - {"pip", "setuptools"})))'
}
python3.13 -m venv "$ws/venv"
"$ws/venv/bin/pip" install -q --disable-pip-version-check --no-cache-dir --pre --index-url "$index_url" \
  "torch[device-gfx1201]" "example-rocm7-pjrt[device-gfx1201]" >"$ws/pip.log" 2>&1 || fail "pip install: $(tail -5 "$ws/pip.log")"
[[ $(installed "$ws/venv") == "$want" ]] || fail "pip installed $(installed "$ws/venv"), want $want"
read_json pip
"$ws/venv/bin/python" -c "import importlib.metadata as md; v = md.version('rocm-sdk-device-gfx1201'); assert v == '$sdk', v" ||
  fail "pip installed another rocm-sdk-device-gfx1201"
"$root/.venv/bin/uv" venv -q -p python3.13 "$ws/venv-uv" && "$root/.venv/bin/uv" pip install -q --python "$ws/venv-uv/bin/python" \
  --no-cache --prerelease allow --index-url "$index_url" "torch[device-gfx1201]" "example-rocm7-pjrt[device-gfx1201]" >"$ws/uv.log" 2>&1 ||
  fail "uv pip install: $(tail -5 "$ws/uv.log")"
[[ $(installed "$ws/venv-uv") == "$want" ]] || fail "uv installed $(installed "$ws/venv-uv"), want $want"
read_json uv
site=$(realpath "$("$ws/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')")
checked=0
while read -r so; do
  for lib in $(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(lib\(amdhip64\|hsa\|roc\|hip\|MIOpen\|rccl\)[^]]*\)\]/\1/p'); do
    got=$(env -u LD_LIBRARY_PATH ldd "$so" | awk -v l="$lib" '$1 == l { print $3 }')
    got=$(realpath -m "$got")
    [[ $got == "$site/_rocm_sdk_core/lib/$lib" || $got == "$site"/_rocm_sdk_libraries*/lib/"$lib" ]] ||
      fail "${so#"$site"/}: $lib resolves to '$got', not the pip SDK's"
    checked=$((checked + 1))
  done
done < <(find "$site/jax_plugins" -name '*.so*' -type f)
((checked > 0)) || fail "no ROCm DT_NEEDED found in the example's .so files under $site/jax_plugins"
echo "ok: pip and uv install both sets from one HTTP index at one SDK, reading its PEP 691 JSON pages; $checked ROCm DT_NEEDED resolve from the pip SDK"

echo "--- 3. a pip SDK of two versions"
expect_build_failure "$ws/mixed.log" --@rules_rocm//rocm:toolkit=mixed_pip @rules_rocm//examples/pjrt:wheel
expect_in "$ws/mixed.log" "ROCm toolkit mixed_pip: the pip SDK's wheels disagree on the version" \
  "rocm_sdk_core-7.13.0a20261202-py3-none-linux_x86_64.whl is 7.13.0a20261202" "rocm_sdk_devel-$sdk-py3-none-linux_x86_64.whl is $sdk"
echo "ok: refused, naming the wheels and their versions"

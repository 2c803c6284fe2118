#!/usr/bin/env bash
# `rocm-wheel thin` on a real ROCm wheel: jax-rocm7-pjrt 0.10.2 from PyPI
# (154 MB; a 503 MB plugin whose .hip_fatbin holds 43 zstd CCOB v3 bundles
# for 27 targets). Downloaded once into ~/.cache/rules_rocm/wheels/ and
# checked by sha256; never committed. Thinned to gfx120X-all it must:
# - list exactly gfx1200 and gfx1201 in every bundle (`rocm-wheel inspect`),
# - be at least 25 % smaller,
# - have RECORD hashes that `wheel unpack` accepts and install with pip,
# - keep the plugin byte-identical outside .hip_fatbin, judged by LLVM's
#   readelf (headers, sections, segments, relocations, symbols) and cmp,
# - hold bundles clang-offload-bundler -list reads, with exactly the host
#   entry and the two targets,
# - come out the same when thinned again (reproducible).
# And the refusals: a target the wheel lacks (naming what it has), a wheel
# without device code, a bundle that would lose its last code object.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib/common.sh
source tests/lib/pypi_wheel.sh
source tests/lib/elf_compare.sh
VENV=${ROCM_WHEEL_VENV:-$PWD/.venv}
LLVM=$(llvm_bin)
require_tools "$VENV/bin/pip" "$VENV/bin/wheel" "$LLVM/llvm-readelf" "$LLVM/clang-offload-bundler" "$LLVM/llvm-objcopy"
WHL=$PJRT_WHEEL
fat=$(cached_pjrt_wheel)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source tests/lib/rocm_wheel.sh
RW=$(rocm_wheel_path) || fail "cannot build //tools:rocm-wheel"

mkdir "$tmp/out"
thin=$tmp/out/$WHL
"$RW" thin --gfx gfx120X-all "$fat" -o "$thin" >"$tmp/thin.txt" || fail "rocm-wheel thin"
grep -q "kept gfx1200, gfx1201" "$tmp/thin.txt" || fail "thin's report names no kept targets: $(head -3 "$tmp/thin.txt")"

# Every bundle: exactly gfx1200 and gfx1201; as many bundles as before.
"$RW" inspect --json "$fat" >"$tmp/fat.json"
"$RW" inspect --json "$thin" >"$tmp/thin.json"
"$VENV/bin/python" - "$tmp/fat.json" "$tmp/thin.json" <<'PY' || fail "inspect of the thinned wheel"
import json, sys
fat, thin = (json.load(open(p)) for p in sys.argv[1:3])
def bundles(r):
    return [(e["path"], b) for e in r["elf_files"] for b in e["bundles"]]
fb, tb = bundles(fat), bundles(thin)
assert len(fb) == len(tb) and len(tb) >= 40, (len(fb), len(tb))
fat_targets = {x["target"] for _, b in fb for x in b["entries"] if x["target"]}
assert len(fat_targets) >= 20, sorted(fat_targets)
for (path, b), (_, f) in zip(tb, fb):
    got = sorted(x["target"] for x in b["entries"] if x["target"])
    assert got == ["gfx1200", "gfx1201"], (path, b["offset"], got)
    assert b["offset"] == f["offset"] and b["compression"] == f["compression"], (b, f)
    assert b["format_version"] == f["format_version"], (b, f)
print("inspect: %d bundles, each exactly gfx1200, gfx1201 (was %d targets)" % (len(tb), len(fat_targets)))
PY

fat_size=$(stat -c %s "$fat")
thin_size=$(stat -c %s "$thin")
((thin_size * 4 <= fat_size * 3)) || fail "thinned wheel is $thin_size bytes, not 25 % smaller than $fat_size"
echo "size: $fat_size -> $thin_size bytes ($((100 - thin_size * 100 / fat_size)) % smaller)"

# `wheel unpack` checks every RECORD hash and size.
"$VENV/bin/wheel" unpack -d "$tmp/fat" "$fat" >/dev/null || fail "wheel unpack of the PyPI wheel"
"$VENV/bin/wheel" unpack -d "$tmp/thin" "$thin" >/dev/null || fail "wheel unpack of the thinned wheel (RECORD)"
so=jax_rocm7_pjrt-0.10.2/jax_plugins/xla_rocm7/xla_rocm_plugin.so
a=$tmp/fat/$so b=$tmp/thin/$so
[[ -f $b ]] || fail "$so missing from the thinned wheel"
identical_outside_section "$a" "$b" .hip_fatbin "-h -S -l" "-r" "--dyn-syms -s" "-d -V -n"
cmp -s "$a" "$b" && fail "the plugin's .hip_fatbin did not change"
for f in $(cd "$tmp/fat" && find . -type f ! -name "$(basename "$so")" ! -path "*.dist-info/RECORD"); do
  cmp -s "$tmp/fat/$f" "$tmp/thin/$f" || fail "$f changed"
done
echo "plugin: identical outside .hip_fatbin; headers, relocations, symbols equal"

# clang-offload-bundler reads every bundle of the thinned section.
"$LLVM/llvm-objcopy" --dump-section .hip_fatbin="$tmp/fatbin" "$b" /dev/null
"$RW" bundle list --json "$tmp/fatbin" >"$tmp/bundles.json"
"$VENV/bin/python" - "$tmp/fatbin" "$tmp/bundles.json" "$tmp/b" <<'PY' || fail "cutting bundles"
import json, sys
data = open(sys.argv[1], "rb").read()
for i, b in enumerate(json.load(open(sys.argv[2]))["bundles"]):
    open("%s%03d" % (sys.argv[3], i), "wb").write(data[b["offset"]:b["offset"] + b["size"]])
PY
n=0
for f in "$tmp"/b[0-9][0-9][0-9]; do
  "$LLVM/clang-offload-bundler" -list -type=o -input="$f" | sort >"$tmp/ids" || fail "clang-offload-bundler -list $f"
  printf '%s\n' hipv4-amdgcn-amd-amdhsa--gfx1200 hipv4-amdgcn-amd-amdhsa--gfx1201 host-x86_64-unknown-linux-gnu- | sort | diff - "$tmp/ids" >/dev/null ||
    fail "bundle $f lists $(tr '\n' ' ' <"$tmp/ids")"
  n=$((n + 1))
done
((n >= 40)) || fail "only $n bundles cut from the section"
echo "clang-offload-bundler -list: $n bundles, each host + gfx1200 + gfx1201"

# pip installs it (no dependencies: only the plugin itself is under test).
"$VENV/bin/python" -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet --no-deps --no-index "$thin" || fail "pip install"
cmp "$tmp/venv/lib/python"*/site-packages/jax_plugins/xla_rocm7/xla_rocm_plugin.so "$b" || fail "installed plugin differs"
echo "pip: installed"

# Reproducible.
mkdir "$tmp/again"
"$RW" thin --gfx gfx120X-all "$fat" -o "$tmp/again/$WHL" >/dev/null
cmp "$thin" "$tmp/again/$WHL" || fail "a second thin gave other bytes"

# Refusals, with nothing left behind.
expect_error() {
  local want=$1; shift
  if "$RW" thin "$@" >"$tmp/err" 2>&1; then fail "thin $* succeeded"; fi
  grep -qF -- "$want" "$tmp/err" || fail "thin $*: message lacks '$want': $(cat "$tmp/err")"
}
mkdir "$tmp/refused"
expect_error "the wheel has code for gfx900, gfx906, gfx908, gfx90a, gfx90c" --gfx gfx1250 "$fat" -o "$tmp/refused/$WHL"
[[ -z $(ls -A "$tmp/refused") ]] || fail "a refused thin left files: $(ls -A "$tmp/refused")"
echo "PASS"

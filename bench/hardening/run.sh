#!/usr/bin/env bash
# bench/hardening/run.sh [RUNS]: rocm-wheel's readers and writer on a real
# ROCm wheel, jax-rocm7-pjrt 0.10.2 from PyPI (one 503 MB plugin .so, 154 MB
# wheel; downloaded with `pip download --no-deps` into bench/out/, never
# committed). Peak RSS and wall time of `rocm-wheel inspect` and `check` on
# the wheel, anchored on `auditwheel show` of the same wheel, and of
# `rocm-wheel build` of its unpacked payload, anchored on `wheel pack` of the
# same tree (deflate level 6 for both, sizes compared). Runs alternate
# between the tools; each figure is the fastest of RUNS. Writes the numbers
# of bench/hardening/README.md (its findings kept). Needs the venv (`make
# setup`) and cargo; runs as it is inside scripts/buildroot.
set -euo pipefail
runs=${1:-3}
repo=$(cd "$(dirname "$0")/../.." && pwd)
venv=${ROCM_WHEEL_VENV:-$repo/.venv}
for t in pip wheel auditwheel python; do
  [[ -x $venv/bin/$t ]] || { echo "run \`make setup\` first ($venv/bin/$t missing)" >&2; exit 1; }
done
out=$repo/bench/out/hardening
mkdir -p "$out"
whl=jax_rocm7_pjrt-0.10.2-py3-none-manylinux_2_27_x86_64.whl
[[ -f $out/$whl ]] || "$venv/bin/pip" download --quiet --no-deps --only-binary=:all: \
  --python-version 3.12 --platform manylinux_2_27_x86_64 -d "$out" jax-rocm7-pjrt==0.10.2 >&2
cargo=$(command -v cargo || echo "$HOME/.cargo/bin/cargo")
"$cargo" build --quiet --release --locked --manifest-path "$repo/tools/Cargo.toml" -p rocm-wheel >&2
tool=$repo/tools/target/release/rocm-wheel

# The payload both writers pack: the wheel unpacked by `wheel unpack`; the
# manifest names the same files and the metadata fields that matter.
rm -rf "$out/unpacked"
"$venv/bin/wheel" unpack -d "$out/unpacked" "$out/$whl" >/dev/null
tree=$out/unpacked/jax_rocm7_pjrt-0.10.2
"$venv/bin/python" - "$tree" > "$out/manifest.json" <<'PY'
import json, os, sys
tree = sys.argv[1]
files = []
for d, _, names in os.walk(tree):
    for n in names:
        p = os.path.relpath(os.path.join(d, n), tree)
        if not p.split("/")[0].endswith(".dist-info"):
            files.append({"path": p, "src": os.path.join(tree, p)})
print(json.dumps({
    "distribution": "jax_rocm7_pjrt", "version": "0.10.2",
    # The PyPI wheel says Root-Is-Purelib: true for a .so; rocm-wheel
    # refuses that, so this one goes to platlib (same bytes to compress).
    "tags": ["py3-none-manylinux_2_27_x86_64"],
    "metadata": {"summary": "JAX XLA PJRT Plugin for AMD GPUs (ROCm:unknown)"},
    "entry_points": {"jax_plugins": {"xla_rocm7": "jax_plugins.xla_rocm7"}},
    "files": sorted(files, key=lambda f: f["path"]),
}))
PY

# `check` and `inspect` exit 1 on findings.
results=$out/results.tsv
: > "$results"
source "$repo/bench/lib/measure.sh"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for i in $(seq 1 "$runs"); do
  rm -rf "$out/ours" "$out/theirs"; mkdir -p "$out/ours" "$out/theirs"
  measure_fields 0,1 inspect -- "$tool" inspect "$out/$whl"
  measure_fields 0,1 check -- "$tool" check "$out/$whl"
  measure auditwheel-show "$venv/bin/auditwheel" show "$out/$whl"
  measure build "$tool" build --compression-level 6 --manifest "$out/manifest.json" --output "$out/ours/$whl"
  measure wheel-pack "$venv/bin/wheel" pack -d "$out/theirs" "$tree"
  echo "run $i/$runs: $(tail -5 "$results" | cut -f1,2 | tr '\n\t' '  ')" >&2
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# Both wheels hold the same payload.
"$venv/bin/python" - "$out/ours/$whl" "$out/theirs/$whl" <<'PY'
import sys, zipfile
a, b = (zipfile.ZipFile(p) for p in sys.argv[1:3])
assert a.testzip() is None and b.testzip() is None
pa = {n for n in a.namelist() if ".dist-info/" not in n}
pb = {n for n in b.namelist() if ".dist-info/" not in n}
assert pa == pb, pa ^ pb
for n in pa:
    assert a.read(n) == b.read(n), n
PY

so_size=$(stat -c %s "$tree/jax_plugins/xla_rocm7/xla_rocm_plugin.so")
"$venv/bin/python" - "$results" "$runs" "$so_size" "$(stat -c %s "$out/$whl")" \
  "$(stat -c %s "$out/ours/$whl")" "$(stat -c %s "$out/theirs/$whl")" \
  "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" "$(nproc)" \
  "$("$tool" --version)" "$("$venv/bin/wheel" version)" "$("$venv/bin/auditwheel" --version | head -1 | cut -d' ' -f1-2)" \
  "$load_before" "$load_after" > "$out/numbers.md" <<'PY'
import datetime, sys
(results, runs, so, whl, ours, theirs, cpu, ncpu, tool, wheel, aw, lb, la) = sys.argv[1:]
rows = {}
for line in open(results):
    name, wall, rss, code, _ = line.split("\t")
    rows.setdefault(name, []).append((float(wall), int(rss), int(code)))
best = {n: (min(r[0] for r in v), min(r[1] for r in v), v[0][2]) for n, v in rows.items()}
mib = lambda kib: f"{kib / 1024:.1f} MiB"
def row(label, n, anchor, extra=""):
    w, r, c = best[n]
    aw_, ar, _ = best[anchor]
    return (f"| {label} | {w:.2f} s | {aw_ / w:.2f}x | {mib(r)} | {r / ar:.3g}x | {extra} |")
size_ratio = int(ours) / int(theirs)
table = "\n".join([
    row("`rocm-wheel inspect`", "inspect", "auditwheel-show", f"exit {best['inspect'][2]}"),
    row("`rocm-wheel check`", "check", "auditwheel-show", f"exit {best['check'][2]}"),
    f"| `auditwheel show` (anchor) | {best['auditwheel-show'][0]:.2f} s | 1.00x | {mib(best['auditwheel-show'][1])} | 1x | |",
    row("`rocm-wheel build` (level 6)", "build", "wheel-pack",
        f"{int(ours) / 1e6:.1f} MB, {size_ratio:.3f}x of `wheel pack`"),
    f"| `wheel pack` (anchor) | {best['wheel-pack'][0]:.2f} s | 1.00x | {mib(best['wheel-pack'][1])} | 1x | {int(theirs) / 1e6:.1f} MB |",
])
print(f"""## A real ROCm wheel: jax-rocm7-pjrt 0.10.2

`jax_rocm7_pjrt-0.10.2-py3-none-manylinux_2_27_x86_64.whl` from PyPI
({int(whl) / 1e6:.1f} MB; one {int(so) / 1e6:.1f} MB plugin `.so` plus two
small Python files). `inspect` and `check` read the wheel, anchored on
`auditwheel show` of the same wheel (which unpacks it to a temporary
directory and reads the ELF files there); `build` packs the unpacked payload (`wheel unpack`), anchored on
`wheel pack` of the same tree, deflate level 6 for both. Fastest of {runs}
runs, the tools alternating; speed-up and RSS ratio are against the anchor
of the same run. Peak RSS is the process's own maximum resident set size
(`wait4`).

| | wall time | speed-up | peak RSS | RSS, ours / anchor | |
|---|---:|---:|---:|---:|---|
{table}

The memory bounds (`tools/crates/rocm-wheel/README.md`): `inspect` and
`check` ≤ 64 MB plus the largest member part held whole on purpose. Both
read the 503 MB `.so` sparsely (headers, dynamic and symbol tables);
`inspect` also keeps its `.hip_fatbin` section whole to list the offload
bundles in it. `build` streams files in 1 MiB chunks.

Machine: {cpu}, {ncpu} cores shared with other jobs (load average {lb}
before, {la} after). {tool}, {wheel}, {aw}.
Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC.

Reproduce: `scripts/buildroot bench/hardening/run.sh {runs}` (the wheel and
outputs in `bench/out/hardening/`; the numbers are rewritten, the findings
kept).""")
PY
# The hand-written findings below the numbers stay.
source "$repo/bench/lib/readme.sh"
write_readme "$repo/bench/hardening/README.md" <"$out/numbers.md"
cat "$repo/bench/hardening/README.md"

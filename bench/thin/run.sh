#!/usr/bin/env bash
# bench/thin/run.sh [RUNS]: `rocm-wheel thin --gfx gfx120X-all` on the real
# jax-rocm7-pjrt 0.10.2 wheel (154 MB; 503 MB plugin, 55 MB .hip_fatbin of
# 43 zstd bundles for 27 targets), the cached download of
# tests/e2e/thin_real_wheel_test.sh. Anchor, in the same run: what any
# rewrite of one member must at least do, `unzip` the wheel and `zip -6` it
# again (Info-ZIP, one thread), and a plain `cp` of the wheel. Peak RSS
# from wait4; each figure the fastest of RUNS, runs alternating. Writes
# docs/benchmarks-thin.md. Run inside scripts/buildroot after `make setup`
# (the test downloads the wheel).
set -euo pipefail
runs=${1:-3}
repo=$(cd "$(dirname "$0")/../.." && pwd)
venv=${ROCM_WHEEL_VENV:-$repo/.venv}
whl=jax_rocm7_pjrt-0.10.2-py3-none-manylinux_2_27_x86_64.whl
fat=$HOME/.cache/rules_rocm/wheels/$whl
[[ -f $fat ]] || { echo "no $fat: run tests/e2e/thin_real_wheel_test.sh first (it downloads and verifies it)" >&2; exit 1; }
for t in unzip zip; do command -v $t >/dev/null || { echo "$t missing" >&2; exit 1; }; done
cd "$repo"
source tests/lib/rocm_wheel.sh
tool=$(rocm_wheel_path)
out=$repo/bench/out/thin
rm -rf "$out"; mkdir -p "$out"
results=$out/results.tsv
: >"$results"
source bench/lib/measure.sh
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for i in $(seq 1 "$runs"); do
  rm -rf "$out/thin" "$out/tree" "$out/rezip.whl" "$out/copy.whl"; mkdir -p "$out/thin" "$out/tree"
  measure thin "$tool" thin --gfx gfx120X-all "$fat" -o "$out/thin/$whl"
  measure unzip-zip bash -c 'cd "$1" && unzip -q "$2" && zip -q -r -6 -X ../rezip.whl .' _ "$out/tree" "$fat"
  measure cp cp "$fat" "$out/copy.whl"
  echo "run $i/$runs: $(tail -3 "$results" | cut -f1,2 | tr '\n\t' '  ')" >&2
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
"$venv/bin/python" - "$results" "$runs" "$(stat -c %s "$fat")" "$(stat -c %s "$out/thin/$whl")" \
  "$(stat -c %s "$out/rezip.whl")" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" \
  "$(nproc)" "$("$tool" --version)" "$load_before" "$load_after" >"$repo/docs/benchmarks-thin.md" <<'PY'
import datetime, sys
results, runs, fat, thin, rezip, cpu, ncpu, tool, lb, la = sys.argv[1:]
rows = {}
for line in open(results):
    n, w, r = line.split("\t")
    rows.setdefault(n, []).append((float(w), int(r)))
best = {n: (min(x[0] for x in v), min(x[1] for x in v)) for n, v in rows.items()}
mib = lambda k: f"{k / 1024:.1f} MiB"
tw, tr = best["thin"]
aw, ar = best["unzip-zip"]
cw, cr = best["cp"]
print(f"""## `rocm-wheel thin` on jax-rocm7-pjrt 0.10.2

`jax_rocm7_pjrt-0.10.2-py3-none-manylinux_2_27_x86_64.whl` from PyPI
({int(fat) / 1e6:.1f} MB; one 503 MB plugin whose 55 MB `.hip_fatbin` holds 43 zstd
bundles for 27 targets), thinned with `--gfx gfx120X-all`. Written by
`bench/thin/run.sh`; fastest of {runs} alternating runs; {cpu}, {ncpu} cores,
load average {lb} before, {la} after; {tool};
{datetime.date.today().isoformat()}.

| command | wall | speed vs `unzip` + `zip -6` (> 1: faster) | peak RSS | output |
| --- | --- | --- | --- | --- |
| `rocm-wheel thin --gfx gfx120X-all` | {tw:.2f} s | **{aw / tw:.2f}×** | {mib(tr)} | {int(thin) / 1e6:.1f} MB (**{100 - 100 * int(thin) / int(fat):.1f} % smaller**) |
| `unzip` + `zip -r -6` (anchor) | {aw:.2f} s | 1.00× | {mib(ar)} | {int(rezip) / 1e6:.1f} MB |
| `cp` of the wheel | {cw:.2f} s | {aw / cw:.2f}× | {mib(cr)} | |

`thin` holds the `.hip_fatbin` section (55 MB) and one decompressed bundle
on purpose: its peak RSS is that plus the largest bundle, which in this
wheel decompresses to 239 MB (the 43 bundles hold 5.2 GB uncompressed, all
of which is decoded: the time over the anchor). The plugin itself is
unpacked to a temporary file next to the output, not into memory, and the
other members are copied as compressed bytes. Decoding each bundle as a
stream and keeping only the kept entries would bound memory by the section
alone; not done yet.
""")
PY
cat "$repo/docs/benchmarks-thin.md"

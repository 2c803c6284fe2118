#!/usr/bin/env bash
# bench/thin/run.sh [RUNS]: `rocm-wheel thin --gfx gfx120X-all` on the real
# jax-rocm7-pjrt 0.10.2 wheel (154 MB; 503 MB plugin, 55 MB .hip_fatbin of
# 43 zstd bundles for 27 targets), downloaded once and checked by sha256
# (tests/lib/pypi_wheel.sh, shared with the e2e tests). Anchor, in the same run: what a
# rewrite that deflates the member again does, `unzip` the wheel and
# `zip -6` it again (Info-ZIP, one thread), and a plain `cp` of the wheel.
# Peak RSS and CPU time from wait4; each figure the fastest of RUNS, runs
# alternating. Writes
# bench/thin/README.md. Run inside scripts/buildroot after `make setup`.
BENCH=thin
source "$(dirname "$0")/../lib/pjrt_wheel_bench.sh"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for i in $(seq 1 "$runs"); do
  rm -rf "$out/thin" "$out/tree" "$out/rezip.whl" "$out/copy.whl"; mkdir -p "$out/thin" "$out/tree"
  measure thin "$tool" thin --gfx gfx120X-all "$fat" -o "$out/thin/$whl"
  measure unzip-zip bash -c 'cd "$1" && unzip -q "$2" && zip -q -r -6 -X ../rezip.whl .' _ "$out/tree" "$fat"
  measure cp cp "$fat" "$out/copy.whl"
  echo "run $i/$runs (load $(cut -d' ' -f1 /proc/loadavg)): $(tail -3 "$results" | cut -f1,2,5 | tr '\n\t' '  ')" >&2
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
"$venv/bin/python" - "$results" "$runs" "$(stat -c %s "$fat")" "$(stat -c %s "$out/thin/$whl")" \
  "$(stat -c %s "$out/rezip.whl")" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" \
  "$(nproc)" "$("$tool" --version)" "$load_before" "$load_after" >"$repo/bench/thin/README.md" <<'PY'
import datetime, sys
results, runs, fat, thin, rezip, cpu, ncpu, tool, lb, la = sys.argv[1:]
rows = {}
for line in open(results):
    n, w, r, _, c = line.split("\t")
    rows.setdefault(n, []).append((float(w), int(r), float(c)))
best = {n: tuple(min(x[i] for x in v) for i in range(3)) for n, v in rows.items()}
mib = lambda k: f"{k / 1024:.1f} MiB"
tw, tr, tc = best["thin"]
aw, ar, ac = best["unzip-zip"]
cw, cr, cc = best["cp"]
print(f"""## `rocm-wheel thin` on jax-rocm7-pjrt 0.10.2

`jax_rocm7_pjrt-0.10.2-py3-none-manylinux_2_27_x86_64.whl` from PyPI
({int(fat) / 1e6:.1f} MB; one 503 MB plugin whose 55 MB `.hip_fatbin` holds 43 zstd
bundles for 27 targets), thinned with `--gfx gfx120X-all`. Written by
`bench/thin/run.sh`; fastest of {runs} alternating runs; {cpu}, {ncpu} cores,
load average {lb} before, {la} after; {tool};
{datetime.date.today().isoformat()}.

| command | wall | speed vs `unzip` + `zip -6` (> 1: faster) | CPU (user + sys) | CPU-time ratio (> 1: less) | peak RSS | output |
| --- | --- | --- | --- | --- | --- | --- |
| `rocm-wheel thin --gfx gfx120X-all` | {tw:.2f} s | **{aw / tw:.2f}×** | {tc:.2f} s | **{ac / tc:.2f}×** | {mib(tr)} | {int(thin) / 1e6:.1f} MB (**{100 - 100 * int(thin) / int(fat):.1f} % smaller**) |
| `unzip` + `zip -r -6` (anchor) | {aw:.2f} s | 1.00× | {ac:.2f} s | 1.00× | {mib(ar)} | {int(rezip) / 1e6:.1f} MB |
| `cp` of the wheel | {cw:.2f} s | {aw / cw:.2f}× | {cc:.2f} s | | {mib(cr)} | |

Wall time counts what the other processes on the machine took from the
run (the cores are shared); CPU time (the fastest run's user + sys of the
command and its children, from `wait4`) hardly does, so the CPU-time
ratio is the steadier figure on a loaded machine. `thin` uses both cores
(bundles and deflate in parallel), so its wall-clock speedup can exceed
its CPU-time ratio on an idle machine.

Where the time goes: each bundle is decoded as a stream only up to the
end of its last kept entry (the entries in between are decoded into a
scratch buffer and dropped; the CCOB hash, which covers the whole payload,
is therefore not checked), the kept entries are laid out and recompressed,
bundles on both cores. The plugin is inflated once (to a temporary file),
noting its deflate stream's byte-aligned block boundaries; only its
`.hip_fatbin` (bytes 91.5–146.5 MB of 503 MB) changes, so the output
copies the input's deflate blocks before the section (closed by an empty
stored block), deflates the section and its surroundings up to the first
mapped boundary 32 KiB past it (the 55 MB and about a MiB around them:
boundaries are noted about every MiB), in parallel chunks, and
copies the input's blocks from there on. The rest of the CPU time is the
inflate, the SHA-256 of the 503 MB for RECORD, and the temporary file's
writes and reads (the `sys` share). The output is smaller than a full
re-deflate would be, as most of the plugin keeps the input's compression.

Memory: the `.hip_fatbin` section (55 MB), the thinned bundles until all
are done (at most the section again), and per core one bundle's kept
entries, their recompressed copy and the zstd decoder's window (the
frame's, at most the bundle's size; LLVM's long-distance matching asks for
up to 128 MiB). The plugin itself is unpacked to a temporary file next to
the output, not into memory, and the other members are copied as
compressed bytes.
""")
PY
cat "$repo/bench/thin/README.md"

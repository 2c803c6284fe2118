#!/usr/bin/env bash
# bench/inspect/run.sh [RUNS]: peak RSS and wall time of `rocm-wheel inspect`
# (and `check`) on real ROCm wheels from PyPI, anchored on `auditwheel show`
# of the same wheel in the same run:
# - jax-rocm7-pjrt 0.10.2: one 503 MB plugin with a 55 MB .hip_fatbin,
# - rocm-llvm-python 7.2.2.562.46: 65 ELF members (a 125 MB libLLVM, 64
#   Cython modules), no offload bundles,
# - cupy-rocm-5-0 13.3.0: 60 ELF members, three with a .hip_fatbin (the
#   largest 134 MB, uncompressed bundles).
# The bound (tools/crates/rocm-wheel/README.md): 64 MB plus the largest
# .hip_fatbin, the one part held whole on purpose. Wheels are downloaded
# once into ~/.cache/rules_rocm/wheels/ and checked by sha256. Runs alternate
# between the tools; each figure is the fastest (smallest) of RUNS. Writes
# the numbers of bench/inspect/README.md (its findings kept). Needs the venv
# (`make setup`) and cargo; runs as it is inside scripts/buildroot.
set -euo pipefail
runs=${1:-3}
repo=$(cd "$(dirname "$0")/../.." && pwd)
venv=${ROCM_WHEEL_VENV:-$repo/.venv}
for t in pip auditwheel python; do
  [[ -x $venv/bin/$t ]] || { echo "run \`make setup\` first ($venv/bin/$t missing)" >&2; exit 1; }
done
out=$repo/bench/out/inspect
mkdir -p "$out"
cache=${RULES_ROCM_CACHE:-$HOME/.cache/rules_rocm}/wheels
source "$repo/tests/lib/common.sh"
source "$repo/tests/lib/pypi_wheel.sh"
VENV=$venv
wheels=(
  "jax_rocm7_pjrt-0.10.2-py3-none-manylinux_2_27_x86_64.whl 2e61678a00bfb72a616c555f1acabccc7cd8e64bb36b90b09d6f991c426b24f0 3.12 manylinux_2_27_x86_64 jax-rocm7-pjrt==0.10.2"
  "rocm_llvm_python-7.2.2.562.46-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl f88c1b684fb97d0be363088f4913d48cbfe8cb4da2f27d395e197a6f6d0c8e6e 3.12 manylinux_2_28_x86_64 rocm-llvm-python==7.2.2.562.46"
  "cupy_rocm_5_0-13.3.0-cp311-cp311-manylinux2014_x86_64.whl 00907762735d182737bee317f532dc381337fb8e978bd846acb268df463b2d7b 3.11 manylinux2014_x86_64 cupy-rocm-5-0==13.3.0"
)
for w in "${wheels[@]}"; do
  read -r whl sha py plat req <<<"$w"
  cached_pypi_wheel "$req" "$whl" "$sha" --python-version "$py" --platform "$plat" >/dev/null
done

cargo=$(command -v cargo || echo "$HOME/.cargo/bin/cargo")
"$cargo" build --quiet --release --locked --manifest-path "$repo/tools/Cargo.toml" -p rocm-wheel >&2
tool=$repo/tools/target/release/rocm-wheel

# `check` exits 1 on findings.
results=$out/results.tsv
: > "$results"
source "$repo/bench/lib/measure.sh"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for i in $(seq 1 "$runs"); do
  for w in "${wheels[@]}"; do
    whl=${w%% *}
    measure_fields 0 "$whl" inspect -- "$tool" inspect --json "$cache/$whl"
    measure_fields 0,1 "$whl" check -- "$tool" check "$cache/$whl"
    measure_fields 0,1 "$whl" auditwheel-show -- "$venv/bin/auditwheel" show "$cache/$whl"
  done
  echo "run $i/$runs done" >&2
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# What each wheel holds: members, ELF members, the largest .hip_fatbin
# (end of its last bundle), from inspect's own report.
for w in "${wheels[@]}"; do
  whl=${w%% *}
  "$tool" inspect --json "$cache/$whl" > "$out/${whl%%-*}.json"
done
"$venv/bin/python" - "$results" "$runs" "$out" "$cache" \
  "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" "$(nproc)" \
  "$("$tool" --version)" "$("$venv/bin/auditwheel" --version | head -1 | cut -d' ' -f1-2)" \
  "$load_before" "$load_after" "${wheels[@]}" > "$out/numbers.md" <<'PY'
import datetime, json, os, sys
results, runs, out, cache, cpu, ncpu, tool, aw, lb, la, *wheels = sys.argv[1:]
rows = {}
for line in open(results):
    whl, name, wall, rss, code, _ = line.rstrip("\n").split("\t")
    rows.setdefault((whl, name), []).append((float(wall), int(rss), int(code)))
best = {k: (min(r[0] for r in v), min(r[1] for r in v), v[0][2]) for k, v in rows.items()}
mib = lambda kib: f"{kib / 1024:.1f} MiB"
lines, specs = [], []
for w in wheels:
    whl, sha, _, _, req = w.split(" ")
    r = json.load(open(os.path.join(out, whl.split("-")[0] + ".json")))
    elf = r["elf_files"]
    fatbin = max([b["offset"] + b["size"] for e in elf for b in e["bundles"]] or [0])
    bound = 64 * 2**20 + fatbin
    plural = "s" if len(elf) != 1 else ""
    label = f"{req} ({os.path.getsize(os.path.join(cache, whl)) / 1e6:.1f} MB, {len(elf)} ELF member{plural})"
    specs.append(f"- `{whl}`, sha256 `{sha}`")
    aw_wall, aw_rss, _ = best[(whl, "auditwheel-show")]
    for name in ("inspect", "check"):
        wall, rss, code = best[(whl, name)]
        held = f"{fatbin / 1e6:.1f} MB" if name == "inspect" else "none"
        b = bound if name == "inspect" else 64 * 2**20
        ok = "yes" if rss * 1024 <= b else "**no**"
        lines.append(f"| {label} | `{name}` | {wall:.2f} s | {aw_wall / wall:.2f}x | {mib(rss)} | "
                     f"{rss / aw_rss:.3g}x | {held} | {b / 2**20:.0f} MiB | {ok} |")
    lines.append(f"| {label} | `auditwheel show` (anchor) | {aw_wall:.2f} s | 1.00x | {mib(aw_rss)} | 1x | | | |")
table = "\n".join(lines)
spec = "\n".join(specs)
print(f"""## `rocm-wheel inspect` memory on real ROCm wheels

Peak RSS and wall time of `rocm-wheel inspect --json` and `rocm-wheel
check` on three wheels from PyPI, anchored on `auditwheel show` of the
same wheel in the same run (it unpacks the wheel to a temporary directory
and reads the ELF files there). Fastest and smallest of {runs} runs, the
tools alternating; speed-up and RSS ratio are against the anchor of the
same wheel and run. Peak RSS is the process's own maximum resident set
size (`wait4`, from a small Python parent).

The bound (`tools/crates/rocm-wheel/README.md`, "Memory bounds"): 64 MB
plus the part held whole on purpose, for `inspect` the largest
`.hip_fatbin` section of the wheel (here: the end of its last bundle);
`check` holds none.

| wheel | tool | wall time | speed-up | peak RSS | RSS, ours / anchor | held on purpose | bound | within |
|---|---|---:|---:|---:|---:|---:|---:|---|
{table}

{spec}

Machine: {cpu}, {ncpu} cores shared with other jobs (load average {lb}
before, {la} after). {tool}, {aw}.
Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC.

Reproduce: `scripts/buildroot bench/inspect/run.sh {runs}` (wheels cached in
`~/.cache/rules_rocm/wheels/`, reports in `bench/out/inspect/`; the numbers
are rewritten, the findings kept).""")
PY
# The hand-written findings below the numbers stay.
source "$repo/bench/lib/readme.sh"
write_readme "$repo/bench/inspect/README.md" <"$out/numbers.md"
cat "$repo/bench/inspect/README.md"

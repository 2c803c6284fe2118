#!/usr/bin/env bash
# bench/wheel_build/run.sh [RUNS] [MIB]: `rocm-wheel build` against
# `wheel pack` on the same unpacked wheel (a >=MIB MiB shared library plus a
# small Python package), both at deflate level 6 (wheel pack's zipfile
# default). Runs alternate so both see the same machine load; the medians of
# RUNS runs go into bench/wheel_build/README.md (its analysis kept).
set -euo pipefail
runs=${1:-5}; mib=${2:-420}
repo=$(cd "$(dirname "$0")/../.." && pwd)
venv=${ROCM_WHEEL_VENV:-$repo/.venv}
[[ -x $venv/bin/wheel ]] || { echo "run \`make setup\` first ($venv/bin/wheel missing)" >&2; exit 1; }
out=$repo/bench/out/wheel_build
mkdir -p "$out"
cargo=$(command -v cargo || echo "$HOME/.cargo/bin/cargo")
"$cargo" build --release --locked --manifest-path "$repo/tools/Cargo.toml" -p rocm-wheel >&2
tool=$repo/tools/target/release/rocm-wheel

# Inputs: the big library and a small package, built once and reused.
[[ -f $out/libbig.so ]] || "$repo/bench/lib/make_big_so.sh" "$out/libbig.so" "$mib" >&2
src=$out/src
rm -rf "$src"; mkdir -p "$src/bigpkg/sub"
cp "$out/libbig.so" "$src/bigpkg/libbig.so"
for i in $(seq 1 40); do
  printf '"""Module %d."""\n\ndef f%d(x):\n    return x * %d\n' "$i" "$i" "$i" > "$src/bigpkg/sub/m$i.py"
done
printf 'from .sub import m1\n' > "$src/bigpkg/__init__.py"
: > "$src/bigpkg/sub/__init__.py"
printf '# bigpkg\n\nBenchmark package.\n' > "$src/README.md"
{
  printf '{"distribution": "bigpkg", "version": "1.0", "tags": ["py3-none-linux_x86_64"],\n'
  printf ' "metadata": {"summary": "wheel build benchmark", "description": {"src": "README.md", "content_type": "text/markdown"}},\n'
  printf ' "files": ['
  sep=""
  (cd "$src" && find bigpkg -type f | LC_ALL=C sort) | while read -r f; do
    printf '%s{"path": "%s", "src": "%s"}' "$sep" "$f" "$f"; sep=", "
  done
  printf ']}\n'
} > "$src/manifest.json"
whl=bigpkg-1.0-py3-none-linux_x86_64.whl

# The unpacked wheel both tools pack: our wheel, unpacked by `wheel unpack`.
(cd "$src" && "$tool" build --manifest manifest.json --output "$out/$whl")
rm -rf "$out/unpacked"
"$venv/bin/wheel" unpack -d "$out/unpacked" "$out/$whl" >/dev/null
tree=$out/unpacked/bigpkg-1.0
# rocm-wheel reads the same files: point the manifest at the unpacked tree.
sed "s|\"src\": \"bigpkg/|\"src\": \"$tree/bigpkg/|g; s|\"src\": \"README.md\"|\"src\": \"$src/README.md\"|" \
  "$src/manifest.json" > "$out/manifest.json"

results=$out/results.tsv
: > "$results"
source "$repo/bench/lib/measure.sh"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for i in $(seq 1 "$runs"); do
  rm -rf "$out/ours" "$out/ours3" "$out/theirs"; mkdir -p "$out/ours" "$out/ours3" "$out/theirs"
  measure rocm-wheel "$tool" build --compression-level 6 --manifest "$out/manifest.json" --output "$out/ours/$whl"
  measure wheel-pack "$venv/bin/wheel" pack -d "$out/theirs" "$tree"
  # For reference: a faster level that still meets the size goal.
  measure rocm-wheel-3 "$tool" build --compression-level 3 --manifest "$out/manifest.json" --output "$out/ours3/$whl"
  echo "run $i/$runs: $(tail -3 "$results" | cut -f1,2 | tr '\n\t' '  ')" >&2
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# Both wheels must hold the same files with the same contents.
"$venv/bin/python" - "$out/ours/$whl" "$out/theirs/$whl" <<'PY'
import sys, zipfile
a, b = (zipfile.ZipFile(p) for p in sys.argv[1:3])
assert a.testzip() is None and b.testzip() is None
na, nb = sorted(a.namelist()), sorted(b.namelist())
assert na == nb, set(na) ^ set(nb)
for n in na:
    if not n.endswith("RECORD"):
        assert a.read(n) == b.read(n), n
PY

so_size=$(stat -c %s "$tree/bigpkg/libbig.so")
ours_size=$(stat -c %s "$out/ours/$whl")
ours3_size=$(stat -c %s "$out/ours3/$whl")
theirs_size=$(stat -c %s "$out/theirs/$whl")
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
wheel_ver=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("wheel"))')
py_ver=$("$venv/bin/python" -c 'import sys; print(sys.version.split()[0])')
"$venv/bin/python" - "$results" "$runs" "$so_size" "$ours_size" "$ours3_size" "$theirs_size" "$cpu" "$(nproc)" \
  "$wheel_ver" "$py_ver" "$("$tool" --version)" "$load_before" "$load_after" \
  > "$out/numbers.md" <<'PY'
import statistics, sys, datetime
(results, runs, so, ours, ours3, theirs, cpu, ncpu, wheel_ver, py_ver, tool_ver, lb, la) = sys.argv[1:]
rows = {}
for line in open(results):
    name, *vals = line.split("\t")
    rows.setdefault(name, []).append([float(v) for v in vals])
med = {n: [statistics.median(col) for col in zip(*r)] for n, r in rows.items()}
sizes = {"rocm-wheel": int(ours), "rocm-wheel-3": int(ours3), "wheel-pack": int(theirs)}
labels = {"rocm-wheel": "`rocm-wheel build` (level 6)", "rocm-wheel-3": "`rocm-wheel build --compression-level 3`",
          "wheel-pack": "`wheel pack` (zlib level 6)"}
t = med["wheel-pack"]
table = []
for n in ["rocm-wheel", "wheel-pack", "rocm-wheel-3"]:
    m = med[n]
    table.append(f"| {labels[n]} | {m[0]:.2f} s | {t[0] / m[0]:.2f}x | {m[3]:.2f} s | "
                 f"{t[3] / m[3]:.2f}x | {sizes[n] / 1e6:.1f} MB | "
                 f"{sizes[n] / sizes['wheel-pack']:.3f}x | {m[1] / 1024:.1f} MB |")
table = "\n".join(table)
print(f"""## Wheel build: `rocm-wheel build` vs `wheel pack`

Same run, same unpacked wheel (a {int(so) / 1e6:.1f} MB shared library from
`bench/lib/make_big_so.sh` plus a 43-file Python package), deflate level 6
for both (`wheel pack` uses zipfile's default, zlib level 6). Runs alternate
between the tools; medians of {runs} runs. Speed-ups and size ratios are
against `wheel pack` in the same run; peak RSS is wait4's maximum
resident set size of the command. Goals (level 6): >= 4x faster, <= 1.05x size, <= 64 MB RSS.

| | wall time | speed-up | CPU (user+sys) | CPU ratio | size | size ratio | peak RSS |
|---|---:|---:|---:|---:|---:|---:|---:|
{table}

Machine: {cpu}, {ncpu} cores shared with other jobs (load average
{lb} before, {la} after; wall times include that contention, CPU times
much less so). {tool_ver} (zlib-rs deflate, 1 MiB chunks compressed on
`--jobs` = {ncpu} threads), wheel {wheel_ver} on CPython {py_ver}.
Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC.

Reproduce: `bench/wheel_build/run.sh {runs}` (inputs and wheels in
`bench/out/wheel_build/`; the numbers are rewritten, the analysis kept).""")
PY
# The hand-written analysis below the numbers stays.
source "$repo/bench/lib/readme.sh"
write_readme "$repo/bench/wheel_build/README.md" <"$out/numbers.md"
cat "$repo/bench/wheel_build/README.md"

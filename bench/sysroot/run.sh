#!/usr/bin/env bash
# What the sysroot costs a cold build: `bazel build //:wheels` from a fresh
# --output_base with --//rocm:sysroot=debian11 (clang 22 against Debian 11's
# glibc and libstdc++, libstdc++ linked statically) against the anchor, the
# same build with --//rocm:sysroot=host (the build root's gcc 16 toolchain),
# back to back in one invocation on the same machine.
#
#   scripts/buildroot [env BENCH_REPEAT=2] bash bench/sysroot/run.sh
#
# Each build: a new Bazel server, no disk or remote cache; downloads come
# from the shared repository cache (sha256-pinned: the crates, the JAX
# example's sources, the nine .deb files once fetched), so the sysroot's
# cost is its extraction and the compiles, not the network. Prints a
# Markdown table (results go to docs/benchmarks.md) and writes
# bench/out/sysroot.json.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-python3}
reps=${BENCH_REPEAT:-1}
mkdir -p bench/out/sysroot
logs=$(cd bench/out/sysroot && pwd)
source bench/lib/output_bases.sh
scratch_work sysroot_bench

# build NAME SYSROOT REP: prints "wall_seconds processes".
build() {
  local name=$1 sysroot=$2 ob
  ob=$(output_base "$1-$3")
  local t0 t1
  t0=$(date +%s.%N)
  bazel --output_base="$ob" build --disk_cache= --remote_cache= "--//rocm:sysroot=$sysroot" //:wheels \
    >"$logs/$name.$3.out" 2>&1 || { cat "$logs/$name.$3.out" >&2; exit 1; }
  t1=$(date +%s.%N)
  drop_output_base "$ob"
  local procs
  procs=$(sed -n 's/^INFO: \([0-9]*\) processes.*/\1/p' "$logs/$name.$3.out" | tail -1)
  echo "$("$PY" -c "print(round($t1 - $t0, 2))") ${procs:-0}"
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
results=()
for rep in $(seq 1 "$reps"); do
  read -r host_s host_p < <(build host host "$rep")
  read -r sys_s sys_p < <(build debian11 debian11 "$rep")
  results+=("$host_s $host_p $sys_s $sys_p")
  echo "sysroot bench: rep $rep: host ${host_s} s ($host_p processes), debian11 ${sys_s} s ($sys_p processes)" >&2
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
"$PY" - "$logs/../sysroot.json" "$load0" "$load1" "${results[@]}" <<'PY'
import json, statistics, sys
out, load0, load1, *rows = sys.argv[1:]
rows = [[float(x) for x in r.split()] for r in rows]
host = statistics.median(r[0] for r in rows)
sysroot = statistics.median(r[2] for r in rows)
data = {"host_s": host, "debian11_s": sysroot, "ratio": sysroot / host,
        "host_processes": rows[0][1], "debian11_processes": rows[0][3],
        "runs": len(rows), "load_before": load0, "load_after": load1}
json.dump(data, open(out, "w"), indent=2)
print("| cold `bazel build //:wheels` | wall (median of %d) | processes |" % len(rows))
print("| --- | --- | --- |")
print("| `--//rocm:sysroot=host` (anchor: gcc 16, sid's glibc 2.44) | %.1f s | %d |" % (host, rows[0][1]))
print("| `--//rocm:sysroot=debian11` (clang 22, glibc 2.31, static libstdc++) | %.1f s (**%.2f×**) | %d |" % (sysroot, sysroot / host, rows[0][3]))
print("load %s -> %s" % (load0, load1))
PY

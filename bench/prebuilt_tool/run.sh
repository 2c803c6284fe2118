#!/usr/bin/env bash
# What rocm-wheel costs a new user's first build: the same 8-line downstream
# module (one hip_library, one wheel) built cold with
#   source    rules_rocm at BENCH_BEFORE (default a8fc40c: the last commit
#             that compiled the tool with rules_rust for every module: the
#             anchor),
#   prebuilt  this checkout, the tool from its release wheel (built here
#             with --config=release, served on 127.0.0.1, pinned by sha256),
#   path      this checkout, the same binary declared by path (nothing to
#             fetch: prebuilt - path is what the download and unpacking
#             cost),
# back to back in one invocation, each from a fresh output base (new server,
# no disk or remote cache; downloads from the shared repository cache,
# crates included). Prints a Markdown table (docs/benchmarks.md) and writes
# bench/out/prebuilt_tool.json.
#
#   scripts/buildroot [env BENCH_BEFORE=<ref> BENCH_REPEAT=2] bash bench/prebuilt_tool/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib/scratch_test.sh
source bench/lib/output_bases.sh
reps=${BENCH_REPEAT:-1}
before_ref=${BENCH_BEFORE:-a8fc40c}
mkdir -p bench/out/prebuilt_tool
logs=$root/bench/out/prebuilt_tool

scratch_work prebuilt_tool_bench
mkdir -p "$work/before" "$work/serve"
git archive "$before_ref" | tar -x -C "$work/before"
whl=$(built_path //tools/release:wheel -- --config=release) || fail "bazel build --config=release //tools/release:wheel"
cp "$whl" "$work/serve/"
name=$(basename "$whl")
sha=$(sha256sum "$work/serve/$name" | cut -d' ' -f1)
mkdir -p "$work/bin"
(cd "$work/bin" && unzip -q -o "$work/serve/$name" && cp rocm_wheel-*.data/scripts/rocm-wheel rocm-wheel && chmod +x rocm-wheel)
read -r server port <<<"$(serve_directory "$work/serve" "$work/http.log")"
trap 'kill "$server" 2>/dev/null; _drop_all_output_bases' EXIT

# module DIR RULES_ROCM [MODULE LINES]: the downstream module.
module() {
  mkdir -p "$1"
  (
    cd "$1"
    scratch_module tool_user "$2"
    printf '%s\n' "${@:3}" >>MODULE.bazel
    cp "$root/tests/outputs/gfx/vadd.hip" .
    cat >BUILD.bazel <<'BUILD'
load("@rules_rocm//rules:defs.bzl", "hip_library", "rocm_wheel")

hip_library(name = "vadd", srcs = ["vadd.hip"])

rocm_wheel(name = "wheel", srcs = [":vadd"], distribution = "tool-user", version = "0.1.0")
BUILD
  )
}
ext='rocm = use_extension("@rules_rocm//rules:extensions.bzl", "rules_rocm")'
module "$work/m-source" "$work/before"
module "$work/m-prebuilt" "$root" "$ext" "rocm.prebuilt_tool(sha256 = \"$sha\", urls = [\"http://127.0.0.1:$port/$name\"])"
module "$work/m-path" "$root" "$ext" "rocm.prebuilt_tool(path = \"$work/bin/rocm-wheel\")"

# measure ARM REP: prints "wall_seconds processes rustc_actions".
measure() {
  local arm=$1 rep=$2 ob t0 t1 procs rustc
  ob=$(output_base "$arm-$rep")
  t0=$(date +%s.%N)
  (cd "$work/m-$arm" && bazel --output_base="$ob" build --disk_cache= --remote_cache= \
    --execution_log_json_file="$logs/$arm.$rep.exec.json" //:wheel) >"$logs/$arm.$rep.out" 2>&1 ||
    { tail -30 "$logs/$arm.$rep.out" >&2; fail "$arm"; }
  t1=$(date +%s.%N)
  (cd "$work/m-$arm" && drop_output_base "$ob")
  procs=$(sed -n 's/^INFO: \([0-9]*\) processes.*/\1/p' "$logs/$arm.$rep.out" | tail -1)
  rustc=$(python3 tests/lib/exec_log_count.py "$logs/$arm.$rep.exec.json" Rustc . | cut -d' ' -f1)
  echo "$(python3 -c "print(round($t1 - $t0, 2))") ${procs:-0} $rustc"
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
rows=()
for rep in $(seq 1 "$reps"); do
  read -r s_s s_p s_r < <(measure source "$rep")
  read -r p_s p_p p_r < <(measure prebuilt "$rep")
  read -r h_s h_p h_r < <(measure path "$rep")
  rows+=("$s_s $s_p $s_r $p_s $p_p $p_r $h_s $h_p $h_r")
  echo "prebuilt_tool bench: rep $rep: source $s_s s ($s_p, $s_r Rustc), prebuilt $p_s s ($p_p, $p_r), path $h_s s ($h_p, $h_r)" >&2
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$logs/../prebuilt_tool.json" "$load0" "$load1" "$before_ref" "${rows[@]}" <<'PY'
import json, statistics, sys
out, load0, load1, ref, *rows = sys.argv[1:]
rows = [[float(x) for x in r.split()] for r in rows]
m = [statistics.median(r[i] for r in rows) for i in range(9)]
s_s, s_p, s_r, p_s, p_p, p_r, h_s, h_p, h_r = m
data = {"source_s": s_s, "source_processes": s_p, "source_rustc": s_r,
        "prebuilt_s": p_s, "prebuilt_processes": p_p, "prebuilt_rustc": p_r,
        "path_s": h_s, "path_processes": h_p, "tool_cost_s": p_s - h_s,
        "anchor": ref, "runs": len(rows), "load_before": load0, "load_after": load1}
json.dump(data, open(out, "w"), indent=2)
print("| cold `bazel build //:wheel` of an 8-line downstream module | wall (median of %d) | processes | Rustc |" % len(rows))
print("| --- | --- | --- | --- |")
print("| tool from source, rules_rocm %s (anchor) | %.1f s | %d | %d |" % (ref, s_s, s_p, s_r))
print("| **tool prebuilt (release wheel over HTTP, sha256)** | **%.1f s (%.2f×)** | %d | %d |" % (p_s, p_s / s_s, p_p, p_r))
print("| tool prebuilt, declared by path (nothing fetched) | %.1f s | %d | %d |" % (h_s, h_p, h_r))
print("| what the prebuilt tool costs: prebuilt - path | %.1f s | | |" % (p_s - h_s))
print("load %s -> %s" % (load0, load1))
PY

#!/usr/bin/env bash
# Cold `bazel build //:wheels` from a fresh --output_base: the rocm-wheel tool
# built by rules_rust (this checkout) against the anchor, a repository rule
# running `cargo build --release` (BENCH_BEFORE, default 0179970: the last
# commit with rules/private/cargo_repository.bzl).
#
#   scripts/buildroot [env VAR=VALUE...] bash bench/cold_wheels/run.sh
#   [BENCH_BEFORE=<git ref>] [BENCH_BAZEL_FLAGS=--//:gfx=gfx90a-dcgpu] [BENCH_REPEAT=1]
#
# Both run back to back in this one invocation on the same machine, each in
# its own fresh output base (new Bazel server, no external repositories, no
# disk or remote cache):
#   before   `git archive BENCH_BEFORE` unpacked into a scratch directory,
#            with ROCM_WHEEL_CARGO_TARGET_DIR an empty directory: its
#            repository rule builds rocm-wheel with cargo from scratch
#            (crates from the shared CARGO_HOME, already downloaded).
#   after    this checkout: rules_rust compiles the tool's crates as Rustc
#            actions (crate archives from the shared repository cache).
# Each build writes a JSON --profile; bench/cold_wheels/profile_parts.py
# splits its wall time into Bazel's phases, the cargo repository fetch and
# the Rustc actions. The output bases are shut down and removed at the end.
# Prints a Markdown table (results go to bench/cold_wheels/README.md) and
# writes bench/out/cold_wheels.json.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=$PWD
read -r -a extra <<<"${BENCH_BAZEL_FLAGS:-}"
# Analysis and execution as separate phases (Bazel 7 interleaves them by
# default), so that the profile's phase markers give each its own time.
FLAGS=(--disk_cache= --remote_cache= --noexperimental_merged_skyframe_analysis_execution "${extra[@]}")
PY=${PY:-python3}
reps=${BENCH_REPEAT:-1}
before_ref=${BENCH_BEFORE:-0179970}
mkdir -p bench/out/cold_wheels
logs=$(cd bench/out/cold_wheels && pwd)
source bench/lib/output_bases.sh
scratch_work cold_wheels

mkdir -p "$work/before"
git archive "$before_ref" | tar -x -C "$work/before"
[[ -f $work/before/rules/private/cargo_repository.bzl ]] ||
  { echo "cold_wheels: $before_ref has no cargo repository rule to compare with" >&2; exit 1; }
# Test-only tools the workspace names (the venv) come from this checkout.
ln -s "$here/.venv" "$work/before/.venv"
# The build root's system bazelrc overrides rules_rust (and what it needs),
# and Bazel refuses overrides of modules missing from the graph: the anchor
# gets rules_rust as an unused dev dependency (resolved, never fetched).
grep -q '"rules_rust"' "$work/before/MODULE.bazel" ||
  echo 'bazel_dep(name = "rules_rust", version = "0.54.1", dev_dependency = True)' >>"$work/before/MODULE.bazel"

# build NAME DIR [FLAGS...]: //:wheels in DIR from a fresh output base;
# prints wall seconds.
build() {
  local name=$1 dir=$2 ob
  ob=$(output_base "$name")
  shift 2
  local t0 t1
  t0=$(date +%s.%N)
  (cd "$dir" && ROCM_WHEEL_CARGO_TARGET_DIR=$work/cargo-target-$name \
    bazel --output_base="$ob" build "${FLAGS[@]}" "$@" //:wheels \
    --profile="$logs/$name.profile.json" --noslim_profile) >"$logs/$name.out" 2>&1 ||
    { cat "$logs/$name.out" >&2; exit 1; }
  t1=$(date +%s.%N)
  (cd "$dir" && drop_output_base "$ob")
  "$PY" -c "print(round($t1 - $t0, 2))"
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
results="{\"flags\": \"${FLAGS[*]}\", \"before\": \"$before_ref $(git rev-parse --short "$before_ref")\", \"rounds\": $reps, \"runs\": ["
sep=""
for ((r = 1; r <= reps; r++)); do
  # The build root's CARGO_HOME, where the crates are (bazel.bazelrc points
  # repository rules at rules_rust's own).
  before=$(build "before-$r" "$work/before" --repo_env=CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}")
  echo "round $r, before (cargo repository rule): ${before}s" >&2
  after=$(build "after-$r" "$here")
  echo "round $r, after (rules_rust): ${after}s" >&2
  results+="$sep{\"before\": {\"seconds\": $before, \"parts\": $("$PY" bench/cold_wheels/profile_parts.py "$logs/before-$r.profile.json")},"
  results+=" \"after\": {\"seconds\": $after, \"parts\": $("$PY" bench/cold_wheels/profile_parts.py "$logs/after-$r.profile.json")}}"
  sep=", "
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
results+="], \"load\": \"$load0 -> $load1\", \"cores\": $(nproc), \"date\": \"$(date -u +%Y-%m-%dT%H:%MZ)\"}"
echo "$results" >bench/out/cold_wheels.json

"$PY" - bench/out/cold_wheels.json <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
# The round with the fastest anchor (the machine is shared and noisy).
run = min(r["runs"], key=lambda x: x["before"]["seconds"])
before, after = run["before"], run["after"]
print(f"{r['cores']} cores, {r['date']}, load average (1/5/15 min) at start -> end: {r['load']}; "
      f"fastest anchor of {r['rounds']} round(s), anchor {r['before']}, flags: {r['flags']}\n")
phases = list(before["parts"]["phases"])
for p in after["parts"]["phases"]:
    if p not in phases:
        phases.append(p)
f = lambda v: "" if v is None else f"{v:.1f} s"
print("| part | before: cargo repository rule (anchor) | after: rules_rust |")
print("|---|---:|---:|")
print(f"| **wall time, `bazel build //:wheels`** | **{before['seconds']:.1f} s** | **{after['seconds']:.1f} s** |")
for p in phases:
    print(f"| phase: {p} | {f(before['parts']['phases'].get(p))} | {f(after['parts']['phases'].get(p))} |")
print(f"| of which cargo build of rocm-wheel (`@rocm_wheel_tools` fetch) | {before['parts']['cargo']:.1f} s | {after['parts']['cargo']:.1f} s |")
print(f"| of which Rustc actions (wall, overlaps merged) | {before['parts']['rustc']:.1f} s | {after['parts']['rustc']:.1f} s |")
print(f"| Rustc actions | {before['parts']['rustc_actions']} | {after['parts']['rustc_actions']} |")
print(f"| of which other repository fetches | {before['parts']['other_fetch']:.1f} s | {after['parts']['other_fetch']:.1f} s |")
print(f"| actions executed (profile) | {before['parts']['actions']} | {after['parts']['actions']} |")
print()
print(f"after / before wall time: {after['seconds'] / before['seconds']:.2f}")
print(f"share of building the tool in the cold build: before {before['parts']['cargo'] / before['seconds']:.2f}, "
      f"after {after['parts']['rustc'] / after['seconds']:.2f}")
PYEOF

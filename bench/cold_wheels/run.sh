#!/usr/bin/env bash
# Cold `bazel build //:wheels` from a fresh --output_base, and its parts.
#
#   scripts/buildroot bench/cold_wheels/run.sh      (inside the build root)
#   [BENCH_BAZEL_FLAGS=--//:gfx=gfx90a-dcgpu] [BENCH_REPEAT=1]
#
# Two scenarios, run back to back in this one invocation on the same machine,
# each in its own fresh output base (new Bazel server, no external
# repositories, no disk or remote cache):
#   cold       ROCM_WHEEL_CARGO_TARGET_DIR is an empty directory: the
#              repository rule builds rocm-wheel with cargo from scratch
#              (crates come from the shared CARGO_HOME, already downloaded).
#   warm cargo the same build, same target dir, now filled by the cold run:
#              cargo only checks that the binary is fresh. This is the anchor.
# Each build writes a JSON --profile; bench/cold_wheels/profile_parts.py
# splits its wall time into Bazel's phases and the repository fetch of
# @rocm_wheel_tools (the cargo build). The output bases are shut down and
# removed at the end. Prints a Markdown table (results go to
# docs/benchmarks-cold-wheels.md) and writes bench/out/cold_wheels.json.
set -euo pipefail
cd "$(dirname "$0")/../.."
read -r -a extra <<<"${BENCH_BAZEL_FLAGS:-}"
# Analysis and execution as separate phases (Bazel 7 interleaves them by
# default), so that the profile's phase markers give each its own time.
FLAGS=(--disk_cache= --remote_cache= --noexperimental_merged_skyframe_analysis_execution "${extra[@]}")
PY=${PY:-python3}
reps=${BENCH_REPEAT:-1}
mkdir -p bench/out/cold_wheels
logs=$(cd bench/out/cold_wheels && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/cold_wheels.XXXXXX")
bases=()
cleanup() {
  local ob
  for ob in "${bases[@]}"; do
    bazel --output_base="$ob" shutdown >/dev/null 2>&1 || true
  done
  # Sandboxes and repository files can be read-only.
  chmod -R u+w "$work" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# build NAME: //:wheels in a fresh output base; prints its wall seconds.
build() {
  local name=$1 ob=$work/ob-$1
  bases+=("$ob")
  local t0 t1
  t0=$(date +%s.%N)
  ROCM_WHEEL_CARGO_TARGET_DIR=$work/cargo-target \
    bazel --output_base="$ob" build "${FLAGS[@]}" //:wheels \
    --profile="$logs/$name.profile.json" --noslim_profile >"$logs/$name.out" 2>&1 ||
    { cat "$logs/$name.out" >&2; exit 1; }
  t1=$(date +%s.%N)
  bazel --output_base="$ob" shutdown >/dev/null 2>&1 || true
  chmod -R u+w "$ob" 2>/dev/null || true
  rm -rf "$ob"
  "$PY" -c "print(round($t1 - $t0, 2))"
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
results="{\"flags\": \"${FLAGS[*]}\", \"rounds\": $reps, \"runs\": ["
sep=""
for ((r = 1; r <= reps; r++)); do
  rm -rf "$work/cargo-target"
  mkdir -p "$work/cargo-target"
  cold=$(build "cold-$r")
  echo "round $r, cold: ${cold}s" >&2
  warm=$(build "warm-$r")
  echo "round $r, warm cargo: ${warm}s" >&2
  results+="$sep{\"cold\": {\"seconds\": $cold, \"parts\": $("$PY" bench/cold_wheels/profile_parts.py "$logs/cold-$r.profile.json")},"
  results+=" \"warm_cargo\": {\"seconds\": $warm, \"parts\": $("$PY" bench/cold_wheels/profile_parts.py "$logs/warm-$r.profile.json")}}"
  sep=", "
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
results+="], \"load\": \"$load0 -> $load1\", \"cores\": $(nproc), \"date\": \"$(date -u +%Y-%m-%dT%H:%MZ)\"}"
echo "$results" >bench/out/cold_wheels.json

"$PY" - bench/out/cold_wheels.json <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
# The round with the fastest cold build (the machine is shared and noisy).
run = min(r["runs"], key=lambda x: x["cold"]["seconds"])
cold, warm = run["cold"], run["warm_cargo"]
print(f"{r['cores']} cores, {r['date']}, load average (1/5/15 min) at start -> end: {r['load']}; "
      f"fastest cold build of {r['rounds']} round(s), flags: {r['flags']}\n")
phases = [p for p in cold["parts"]["phases"]]
for p in warm["parts"]["phases"]:
    if p not in phases:
        phases.append(p)
print("| part | cold | warm cargo (anchor) |")
print("|---|---:|---:|")
print(f"| **wall time, `bazel build //:wheels`** | **{cold['seconds']:.1f} s** | **{warm['seconds']:.1f} s** |")
for p in phases:
    c = cold["parts"]["phases"].get(p)
    w = warm["parts"]["phases"].get(p)
    f = lambda v: "" if v is None else f"{v:.1f} s"
    print(f"| phase: {p} | {f(c)} | {f(w)} |")
print(f"| of which cargo build of rocm-wheel (`@rocm_wheel_tools` fetch) | {cold['parts']['cargo']:.1f} s | {warm['parts']['cargo']:.1f} s |")
print(f"| of which other repository fetches | {cold['parts']['other_fetch']:.1f} s | {warm['parts']['other_fetch']:.1f} s |")
print(f"| actions executed (profile) | {cold['parts']['actions']} | {warm['parts']['actions']} |")
print()
print(f"cold / warm cargo wall time: {cold['seconds'] / warm['seconds']:.2f}")
print(f"share of the cargo build in the cold build: {cold['parts']['cargo'] / cold['seconds']:.2f}")
print(f"cold build less its cargo build, / warm cargo build: {(cold['seconds'] - cold['parts']['cargo']) / warm['seconds']:.2f}")
PYEOF

#!/usr/bin/env bash
# Two ROCm lines in one invocation vs one invocation per line (today's way:
# one job per ROCm install), same machine, same run.
#
#   scripts/buildroot [env BENCH_REPEAT=3] bash bench/toolkits/run.sh
#
# The toolkits test's scratch module (tests/e2e/fixtures/toolkits/probe/BUILD.in: a HIP
# library, a ROCm-dependent extension wheel per Python and a pjrt-style
# wheel per toolkit, a ROCm-independent extension wheel per Python; Pythons
# 3.12 and 3.14, gfx1100) next to two toolkits: the build root's ROCm 7.2
# (`local`, clang 22) and the TheRock-layout ROCm 6.4.3 tarball (clang 21)
# served on 127.0.0.1. Builds of //:wheels:
#   both    --@rules_rocm//rocm:toolkits=local,therock_6_4 (one invocation)
#   local   --@rules_rocm//rocm:toolkit=local
#   6.4     --@rules_rocm//rocm:toolkit=therock_6_4
#   shared  //:plain_wheels: the ROCm-independent wheels alone
# Each starts from `bazel clean` and a new server with the external
# repositories kept (fetched beforehand: both ways pay them alike); no disk
# or remote cache; the rocm-wheel tool is prebuilt (its cost is not this
# question). The bound for one invocation is local + 6.4 - shared: the work
# both lines share done once, nothing else saved. Prints a Markdown table
# (docs/benchmarks.md) and writes bench/out/toolkits.json.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib/scratch_test.sh
source tests/lib/pythons.sh
source tests/lib/therock_toolkit.sh
source bench/lib/output_bases.sh
reps=${BENCH_REPEAT:-1}
PY=$root/.venv/bin/python
[[ -x $PY ]] || fail "run \`make setup\` first ($PY missing)"
py312=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12.*/bin/python3.12 2>/dev/null | sort -V | tail -1 || true)
[[ -x $py312 ]] || fail "no pyenv Python 3.12"
mkdir -p bench/out/toolkits
logs=$root/bench/out/toolkits

scratch_work toolkits_bench
serve_therock_fixture "$work/serve"
trap 'kill "$therock_server" 2>/dev/null; _drop_all_output_bases' EXIT
ob=$(output_base probe)
mkdir -p "$work/main"
cd "$work/main"
scratch_module toolkits_bench "$root"
use_prebuilt_tool "$root" || fail "no rocm-wheel to use as a prebuilt tool"
declare_therock_toolkit
local_pythons_module "$py312" /usr/bin/python3.14
cp "$root/tests/outputs/gfx/rocprim_sum.hip" "$root/tests/outputs/gfx/vadd.hip" "$root"/tests/e2e/fixtures/toolkits/probe/*.c .
cp "$root/tests/e2e/fixtures/toolkits/probe/BUILD.in" BUILD.bazel
FLAGS=(--disk_cache= --remote_cache= --@rules_rocm//:gfx=gfx1100)
both=(--@rules_rocm//rocm:toolkits=local,therock_6_4)
# Fetch everything once (both toolkits, the Pythons, rules_rocm's repositories).
bz build "${FLAGS[@]}" "${both[@]}" //:wheels >"$logs/fetch.out" 2>&1 || { tail -30 "$logs/fetch.out" >&2; fail "//:wheels"; }

# measure NAME REP FLAGS... TARGET: prints "wall_seconds processes".
measure() {
  local name=$1 rep=$2 t0 t1 procs
  shift 2
  bz clean >/dev/null 2>&1
  bz shutdown >/dev/null 2>&1
  t0=$(date +%s.%N)
  bz build "${FLAGS[@]}" "$@" >"$logs/$name.$rep.out" 2>&1 || { tail -30 "$logs/$name.$rep.out" >&2; fail "$name"; }
  t1=$(date +%s.%N)
  procs=$(sed -n 's/^INFO: \([0-9]*\) processes.*/\1/p' "$logs/$name.$rep.out" | tail -1)
  echo "$("$PY" -c "print(round($t1 - $t0, 2))") ${procs:-0}"
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
rows=()
for rep in $(seq 1 "$reps"); do
  read -r b_s b_p < <(measure both "$rep" "${both[@]}" //:wheels)
  read -r l_s l_p < <(measure local "$rep" --@rules_rocm//rocm:toolkit=local //:wheels)
  read -r t_s t_p < <(measure therock "$rep" --@rules_rocm//rocm:toolkit=therock_6_4 //:wheels)
  read -r c_s c_p < <(measure shared "$rep" //:plain_wheels)
  rows+=("$b_s $b_p $l_s $l_p $t_s $t_p $c_s $c_p")
  echo "toolkits bench: rep $rep: both $b_s s ($b_p), local $l_s s ($l_p), 6.4 $t_s s ($t_p), shared $c_s s ($c_p)" >&2
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
cd "$root"
"$PY" - "$logs/../toolkits.json" "$load0" "$load1" "${rows[@]}" <<'PY'
import json, statistics, sys
out, load0, load1, *rows = sys.argv[1:]
rows = [[float(x) for x in r.split()] for r in rows]
med = [statistics.median(r[i] for r in rows) for i in range(8)]
b_s, b_p, l_s, l_p, t_s, t_p, c_s, c_p = med
two_s, two_p = l_s + t_s, l_p + t_p
bound_s, bound_p = two_s - c_s, two_p - c_p
data = {"both_s": b_s, "both_processes": b_p, "local_s": l_s, "local_processes": l_p,
        "therock_6_4_s": t_s, "therock_6_4_processes": t_p, "shared_s": c_s, "shared_processes": c_p,
        "two_invocations_s": two_s, "bound_s": bound_s, "runs": len(rows),
        "load_before": load0, "load_after": load1}
json.dump(data, open(out, "w"), indent=2)
print("| `//:wheels`, two ROCm lines x Python 3.12, 3.14 | wall (median of %d) | processes |" % len(rows))
print("| --- | --- | --- |")
print("| `--toolkit=local` (ROCm 7.2) | %.1f s | %d |" % (l_s, l_p))
print("| `--toolkit=therock_6_4` (ROCm 6.4) | %.1f s | %d |" % (t_s, t_p))
print("| two invocations (anchor) | %.1f s | %d |" % (two_s, two_p))
print("| shared: the ROCm-independent wheels alone | %.1f s | %d |" % (c_s, c_p))
print("| bound: two invocations - shared | %.1f s (%.2f×) | %d |" % (bound_s, bound_s / two_s, bound_p))
print("| **`--toolkits=local,therock_6_4`, one invocation** | **%.1f s (%.2f×)** | %d |" % (b_s, b_s / two_s, b_p))
print("load %s -> %s" % (load0, load1))
PY

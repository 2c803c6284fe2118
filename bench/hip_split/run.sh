#!/usr/bin/env bash
# Split vs monolithic HIP device compilation of a rocPRIM sort TU.
#
#  A. 4 targets (gfx90a gfx942 gfx1100 gfx1201), cold:
#       one hipcc action (targets compiled one after another in one process)
#       vs hip_library (one device action per target, bundle, embed), --jobs=2.
#     Goal: split <= 0.55x monolithic wall time.
#  B. Add a fifth target (gfx1200) to the built set: wall time of the
#     incremental bazel build vs one target's device compile alone.
#     Goal: <= 1.1x.
# Both flows run back to back in this one invocation on the same machine.
# Run it inside the build root: scripts/buildroot bash bench/hip_split/run.sh
# (The sets date from HIP 6.4 / rocPRIM 3.4 on clang 21, where rocPRIM refused
# gfx950 and clang 21's device library had nothing for gfx1250; ROCm 7.2 /
# rocPRIM 4.2 on clang 22 builds both, and the sets stay as they are so that
# runs compare across stacks.)
# Prints a Markdown table; results go to bench/hip_split/README.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
source bench/hip_split/lib.sh
out=$(mktemp -d "${TMPDIR:-/tmp}/hip_split.XXXXXX")
trap 'rm -rf "$out"' EXIT
SET4=gfx90a,gfx942,gfx1100,gfx1201
ADD=gfx1200
SET5=$SET4,$ADD

now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(now)"; }
load0=$(cut -d' ' -f1-3 /proc/loadavg)
renonce
# Build the rocm-wheel tool (rules_rust; HipEmbed runs it) and warm the Bazel
# server and analysis (not measured). The pure-Python example wheel needs the
# tool in the configuration the HIP actions use (rules_rocm's flags reset) and
# nothing else, so on a fresh output base the split build below does not
# compile the tool. (The toolchain target //rules:rocm_wheel has no outputs:
# building it builds nothing.)
"$BAZEL" build "${FLAGS[@]}" "--//:gfx=$SET5" //examples/hello_plugin:wheel 2>"$out/warm.log" || { cat "$out/warm.log" >&2; exit 1; }
"$BAZEL" build "${FLAGS[@]}" --nobuild "--//:gfx=$SET5" //bench/hip_split:sort 2>"$out/warm.log" || { cat "$out/warm.log" >&2; exit 1; }

renonce
t=$(now)
# --offload-compress: the split flow's bundle is zstd-compressed too (the
# default --//:hip_bundle_compression=auto on ROCm >= 6.2).
"$HIPCC" --rocm-path=/usr "--rocm-device-lib-path=$DEVICE_LIB" --offload-compress \
  $(printf -- '--offload-arch=%s ' ${SET4//,/ }) -O3 -std=c++17 -fPIC -I. -c bench/hip_split/sort.hip -o "$out/mono.o"
mono=$(since "$t")

renonce
t=$(now)
"$BAZEL" build "${FLAGS[@]}" "--//:gfx=$SET4" //bench/hip_split:sort 2>"$out/split.log" || { cat "$out/split.log" >&2; exit 1; }
split=$(since "$t")
# Bazel's critical path: the longest chain of actions (the host compile
# alone, or a device compile then bundle and embed); split cannot beat it.
crit=$(sed -n 's/.*Critical Path: \([0-9.]*\)s.*/\1/p' "$out/split.log" | tail -1)

t=$(now)
"$BAZEL" build "${FLAGS[@]}" "--//:gfx=$SET5" --execution_log_json_file="$out/add.json" //bench/hip_split:sort 2>"$out/add.log" \
  || { cat "$out/add.log" >&2; exit 1; }
add=$(since "$t")
ran=$(grep -o '"mnemonic": "[A-Za-z]*"' "$out/add.json" | sort | uniq -c | awk '{printf "%s %s; ", $3, $1}' | tr -d '"')

# One target's device compile alone: the exact command of the $ADD action.
"$BAZEL" aquery "${FLAGS[@]}" "--//:gfx=$ADD" --output=jsonproto \
  'mnemonic("HipDeviceCompile", deps(//bench/hip_split:sort))' 2>/dev/null >"$out/one.json"
execroot=$("$BAZEL" info "${FLAGS[@]}" execution_root 2>/dev/null)
mapfile -t argv < <(python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))["actions"][0]["arguments"]
a[a.index("-o") + 1] = sys.argv[2]
print("\n".join(a))' "$out/one.json" "$out/one.co")
t=$(now)
(cd "$execroot" && "${argv[@]}")
one=$(since "$t")

load=$(cut -d' ' -f1-3 /proc/loadavg)
ratio() { python3 -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]):.2f}')" "$1" "$2"; }
cat <<MD
| measurement ($(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), load $load) | wall s |
|---|---|
| A. hipcc, 4 targets, one action | $mono |
| A. hip_library split, 4 targets, --jobs=2 | $split |
| A. split: critical path of the build (Bazel) | $crit |
| A. split / monolithic (goal <= 0.55) | $(ratio "$split" "$mono") |
| B. one target's device compile ($ADD) | $one |
| B. add $ADD to the built set (bazel build) | $add |
| B. add / one (goal <= 1.1) | $(ratio "$add" "$one") |

Actions run when adding $ADD: $ran
Load average (1/5/15 min) at start: $load0; at end: $load
MD

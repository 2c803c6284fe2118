#!/usr/bin/env bash
# GPU targets end to end, in the workspace's own output base so it shares
# the cache with `make bazel-test`:
#  1. for several --//:gfx values, the built pjrt wheel's .hip_fatbin holds
#     exactly the expanded targets (checked with rocm-wheel inspect and an
#     independent parser, tests/lib/bundle_targets.py);
#  2. narrowing gfx1200,gfx1201 -> gfx1201 re-runs no device or host compile,
#     only bundle, embed, link and wheel (Bazel's execution log);
#  3. errors: unknown family (with did-you-mean), empty value; gfx950 (the
#     rocPRIM example) and gfx1250 build;
#  4. bundle compression: auto (zstd for ROCm >= 6.2), none, zlib;
#  5. $(ROCM_OFFLOAD_ARCH_COPTS) for hipcc-style cc_library copts.
# What analysis alone shows is in //tests/analysis:hip (tests/analysis/hip_test.bzl):
# one device-compile action per target and source naming only its own
# --offload-arch, device-object and host-compile paths independent of the
# set, and the flag errors at //:gfx and //:hip_bundle_compression.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/../.."
BAZEL=${BAZEL:-bazel}
FLAGS=()
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gfx_e2e.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
WHEEL=bazel-bin/examples/pjrt/example_rocm7_pjrt-0.7.1-py3-none-manylinux_2_28_x86_64.whl

source tests/lib/common.sh
# The bundle parser needs zstandard (compressed bundles): the repo's venv.
PY="${ROCM_WHEEL_VENV:-$PWD/.venv}/bin/python"
[[ -x $PY ]] || fail "$PY missing: run \`make setup\` first"

source tests/lib/rocm_wheel.sh
RW=$(rocm_wheel_path) || fail "cannot build //tools:rocm-wheel"
rocm_wheel() { "$RW" "$@"; }

check_set() {
  local value=$1
  shift
  local want
  want=$(printf '%s\n' "$@" | sort -u)
  echo "--- --//:gfx=$value (want: $*)"
  local got
  "$BAZEL" build "${FLAGS[@]}" "--//:gfx=$value" //examples/pjrt:wheel 2>"$tmp/build.err" \
    || { tail -30 "$tmp/build.err" >&2; fail "build of //examples/pjrt:wheel with --//:gfx=$value"; }
  got=$("$PY" tests/lib/bundle_targets.py "$WHEEL")
  [[ $got == "$want" ]] || fail "bundles in $WHEEL hold [$(echo $got)], want [$(echo $want)]"
  rocm_wheel inspect "$WHEEL" --json >"$tmp/inspect.json" || fail "rocm-wheel inspect $WHEEL"
  got=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print("\n".join(sorted({t.split(":")[0] for e in r["elf_files"] for t in e["targets"]})))' "$tmp/inspect.json")
  [[ $got == "$want" ]] || fail "rocm-wheel inspect $WHEEL lists [$(echo $got)], want [$(echo $want)]"
  # Both kernels (vector_add and the rocPRIM radix sort) for every target:
  # one bundle per source, each holding every target.
  got=$("$PY" tests/lib/bundle_targets.py "$WHEEL" --per-bundle | sort | uniq -c | awk '{print $1}' | tr '\n' ' ')
  [[ $got == "2 " ]] || fail "want 2 bundles with the same target set, got counts [$got]"
}

# 1. Sets. Both pjrt kernels (a self-contained one and a rocPRIM radix sort)
# build for every target.
check_set gfx120X-all gfx1200 gfx1201
check_set gfx94X-dcgpu,gfx1151 gfx942 gfx1151
check_set gfx110X-all,gfx90a-dcgpu gfx90a gfx1100 gfx1101 gfx1102 gfx1103
check_set gfx120X-all,gfx94X-dcgpu gfx1200 gfx1201 gfx942

# 4. Compression: `auto` is zstd on ROCm 6.4 (runtimes read CCOB from 6.2).
compression() {
  local value=$1 want=$2
  echo "--- --//:hip_bundle_compression=$value: $want"
  "$BAZEL" build "${FLAGS[@]}" --//:gfx=gfx120X-all "--//:hip_bundle_compression=$value" //examples/pjrt:wheel 2>"$tmp/build.err" \
    || { tail -30 "$tmp/build.err" >&2; fail "build with --//:hip_bundle_compression=$value"; }
  rocm_wheel inspect "$WHEEL" >"$tmp/inspect.txt"
  grep -qE "offload bundles: 2 \\(2 $want\\)" "$tmp/inspect.txt" \
    || { cat "$tmp/inspect.txt" >&2; fail "want 2 $want bundles for --//:hip_bundle_compression=$value"; }
  [[ $("$PY" tests/lib/bundle_targets.py "$WHEEL" | tr '\n' ' ') == "gfx1200 gfx1201 " ]] \
    || fail "$value bundles do not hold gfx1200 gfx1201"
}
compression none uncompressed
compression zlib "zlib v[23]"
compression auto "zstd v[23]"
rocm_wheel check "$WHEEL" >"$tmp/check.txt" 2>&1 || { cat "$tmp/check.txt" >&2; fail "rocm-wheel check rejects the manylinux_2_28 tag"; }

# 2. No device recompile when a target is dropped.
echo "--- gfx1200,gfx1201 -> gfx1201 re-runs no device compile"
"$BAZEL" build "${FLAGS[@]}" --//:gfx=gfx1200,gfx1201 //examples/pjrt:wheel 2>"$tmp/build.err" \
  || { tail -30 "$tmp/build.err" >&2; fail "build gfx1200,gfx1201"; }
"$BAZEL" build "${FLAGS[@]}" --//:gfx=gfx1201 --execution_log_json_file="$tmp/exec.json" //examples/pjrt:wheel \
  2>"$tmp/build.err" || { tail -30 "$tmp/build.err" >&2; fail "build gfx1201"; }
PYTHONPATH=tests/lib python3 - "$tmp/exec.json" <<'PY'
import collections, sys
from exec_log import read_spawns
spawns = read_spawns(sys.argv[1])
counts = collections.Counter(s.get("mnemonic", "?") for s in spawns)
print("executed spawns:", dict(counts))
# Host compiles embed a constant placeholder (the bundle goes in by HipEmbed),
# so they do not depend on the set either.
for m in ("HipDeviceCompile", "HipHostCompile"):
    if counts[m]:
        sys.exit("FAIL: %d %s action(s) re-ran after narrowing the set" % (counts[m], m))
for m in ("HipBundle", "HipEmbed", "CppLink", "RocmWheel"):
    if not counts[m]:
        sys.exit("FAIL: no %s action ran; the narrowed set must rebuild bundles, embed, link and wheel" % m)
PY
[[ $("$PY" tests/lib/bundle_targets.py "$WHEEL") == gfx1201 ]] || fail "wheel after narrowing does not hold exactly gfx1201"

# 3. Errors.
expect_error() {
  local value=$1 target=$2
  shift 2
  echo "--- error: --//:gfx='$value' $target"
  if "$BAZEL" build "${FLAGS[@]}" --nobuild "--//:gfx=$value" "$target" >"$tmp/err.log" 2>&1; then
    fail "--//:gfx='$value' was accepted for $target"
  fi
  local needle
  for needle in "$@"; do
    grep -qF -- "$needle" "$tmp/err.log" || { tail -20 "$tmp/err.log" >&2; fail "error for '$value' lacks: $needle"; }
  done
}
expect_error gfx120x-al //examples/pjrt:wheel "unknown amdgpu family or gfx target 'gfx120x-al'" \
  "Did you mean 'gfx120X-all'?" "Valid families:" "gfx94X-dcgpu"
expect_error gfx94X-dcgpu,gfx9001 //examples/pjrt:wheel "unknown amdgpu family or gfx target 'gfx9001'"
expect_error "" //examples/pjrt:wheel "--//:gfx is empty"
# ROCm 7's rocPRIM (4.x) builds gfx950, clang 22's device library has
# gfx1250 (ROCm 6.4's refusals: tests/e2e/hip_fixture_test.sh).
echo "--- gfx950 (the rocPRIM example) and gfx1250"
"$BAZEL" build "${FLAGS[@]}" --//:gfx=gfx950-dcgpu //examples/pjrt:wheel >"$tmp/gfx950.log" 2>&1 \
  || { tail -30 "$tmp/gfx950.log" >&2; fail "build //examples/pjrt:wheel for gfx950-dcgpu"; }
[[ $("$PY" tests/lib/bundle_targets.py "$WHEEL") == gfx950 ]] || fail "the gfx950-dcgpu wheel does not hold exactly gfx950"
"$BAZEL" build "${FLAGS[@]}" --//:gfx=gfx1250 //tests/outputs/gfx:needs_device_lib >"$tmp/gfx1250.log" 2>&1 \
  || { tail -30 "$tmp/gfx1250.log" >&2; fail "build //tests/outputs/gfx:needs_device_lib for gfx1250"; }

# 5. Make variables for cc_library copts.
echo "--- \$(ROCM_OFFLOAD_ARCH_COPTS)"
"$BAZEL" build "${FLAGS[@]}" --//:gfx=gfx90X-dgpu,gfx103X-igpu //tests/outputs/gfx:offload_copts 2>"$tmp/build.err" \
  || { tail -30 "$tmp/build.err" >&2; fail "build //tests/outputs/gfx:offload_copts"; }
got=$(cat bazel-bin/tests/outputs/gfx/offload_copts.txt)
want="--offload-arch=gfx906 --offload-arch=gfx1035 --offload-arch=gfx1036"
[[ $got == "$want" ]] || fail "ROCM_OFFLOAD_ARCH_COPTS is '$got', want '$want'"

echo "PASS"

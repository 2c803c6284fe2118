#!/usr/bin/env bash
# hip_library's host/device consistency and compilation modes, in the
# workspace's own output base (it shares the cache with `make bazel-test`):
#  1. a source whose device compile sees a define the host compile does not
#     (device_copts = ["-DNO_KERNELS"]) fails the build in HipKernelCheck,
#     naming the library, the source, every target, the missing kernel
#     (demangled) and the likely cause; a target left out on purpose
#     (skip_unsupported_targets) is not reported (gfx_targets_test.sh builds
#     one with the check on);
#  2. -c dbg gives host objects and code objects with debug info, and
#     -c opt code objects without.
# The flags each mode and each flag passes are checked at analysis time in
# //tests/analysis:hip; the kernels of the idioms library in
# //tests/outputs/hip:idioms_kernels_test.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/../.."
BAZEL=${BAZEL:-bazel}
source tests/lib/common.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hip_kernels.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "--- a host/device mismatch fails the build"
expect_build_failure "$tmp/mismatch.log" --//:gfx=gfx120X-all //tests/outputs/hip:mismatch
expect_in "$tmp/mismatch.log" \
  "//tests/outputs/hip:mismatch: tests/outputs/hip/mismatch.hip: the host code registers 2 kernel(s)" \
  "gfx1200: missing" "gfx1201: missing" \
  "only_on_host_side(int*)  [_Z17only_on_host_sidePi]" \
  "Likely cause" "HipHostCompile|HipDeviceCompile"
if grep -qF "on_both_sides" "$tmp/mismatch.log"; then
  fail "a kernel both halves have is reported as missing"
fi

# debug_info FILE: 0 when FILE has a .debug_info section.
debug_info() { readelf -S --wide "$1" | grep -qF ".debug_info"; }

for mode in dbg opt; do
  echo "--- -c $mode"
  "$BAZEL" build -c "$mode" --output_groups=+device_objects //tests/outputs/hip:fill_f32 >"$tmp/$mode.log" 2>&1 ||
    { tail -30 "$tmp/$mode.log" >&2; fail "build -c $mode //tests/outputs/hip:fill_f32"; }
  bin=$("$BAZEL" info -c "$mode" bazel-bin 2>/dev/null)
  objects=("$bin"/tests/outputs/hip/_hip/fill_f32/typed_fill.cu.cc.*)
  ((${#objects[@]} == 6)) || fail "-c $mode: want .host.o, .pic.o, .hipfb, .kernels, gfx1200 and gfx1201 .co; got ${objects[*]}"
  for f in "$bin/tests/outputs/hip/_hip/fill_f32/typed_fill.cu.cc.host.o" "$bin"/tests/outputs/hip/_hip/fill_f32/typed_fill.cu.cc.gfx120*.co; do
    if [[ $mode == dbg ]]; then
      debug_info "$f" || fail "-c dbg: $f has no .debug_info"
    else
      ! debug_info "$f" || fail "-c opt: $f has .debug_info"
    fi
  done
done
echo "PASS"

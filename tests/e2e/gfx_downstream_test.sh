#!/usr/bin/env bash
# The downstream workspace (examples/downstream) imports rules_rocm with
# local_repository and builds its own HIP library + wheel with
# --@rules_rocm//:gfx, with and without the optional second compiler. Its
# own Bazel server (one per workspace) is shut down at the end to give the
# memory back.
set -euo pipefail
export LC_ALL=C
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root/examples/downstream"
BAZEL=${BAZEL:-bazel}
FLAGS=(--config=offline)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gfx_downstream.XXXXXX")
trap '"$BAZEL" shutdown >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
PY="${ROCM_WHEEL_VENV:-$root/.venv}/bin/python"
[[ -x $PY ]] || fail "$PY missing: run \`make setup\` first"

echo "--- downstream build --@rules_rocm//:gfx=gfx950-dcgpu,gfx1201"
"$BAZEL" build "${FLAGS[@]}" --@rules_rocm//:gfx=gfx950-dcgpu,gfx1201 //:wheel 2>"$tmp/build.err" \
  || { tail -40 "$tmp/build.err" >&2; fail "downstream build"; }
whl=bazel-bin/downstream_hip-0.1.0-py3-none-manylinux_2_28_x86_64.whl
got=$("$PY" "$root/tests/gfx/bundle_targets.py" "$whl" | tr '\n' ' ')
[[ $got == "gfx1201 gfx950 " ]] || fail "downstream wheel bundles hold [$got], want [gfx1201 gfx950]"
runpath=$(unzip -p "$whl" downstream_hip/libdownstream_saxpy.so >"$tmp/lib.so" && readelf -d "$tmp/lib.so" | grep -E 'RUNPATH|RPATH' || true)
[[ $runpath == *'[$ORIGIN/../rocm/lib]'* ]] || fail "RUNPATH of the downstream library: $runpath"

echo "--- downstream error names the external flag"
if "$BAZEL" build "${FLAGS[@]}" --nobuild --@rules_rocm//:gfx=gfx95O-dcgpu //:wheel >"$tmp/err.log" 2>&1; then
  fail "an unknown family was accepted"
fi
grep -qF -- "--@rules_rocm//:gfx=gfx95O-dcgpu: unknown amdgpu family or gfx target 'gfx95O-dcgpu'. Did you mean 'gfx950-dcgpu'?" "$tmp/err.log" \
  || { tail -20 "$tmp/err.log" >&2; fail "downstream error message"; }
echo "--- downstream without the second compiler (ROCM_ZIG=none)"
ROCM_ZIG=none "$BAZEL" build "${FLAGS[@]}" --@rules_rocm//:gfx=gfx90a //:wheel 2>"$tmp/build.err" \
  || { tail -40 "$tmp/build.err" >&2; fail "downstream build for gfx90a with ROCM_ZIG=none"; }
got=$("$PY" "$root/tests/gfx/bundle_targets.py" "$whl" | tr '\n' ' ')
[[ $got == "gfx90a " ]] || fail "downstream wheel (ROCm clang only) holds [$got], want [gfx90a]"
if ROCM_ZIG=none "$BAZEL" build "${FLAGS[@]}" --nobuild --@rules_rocm//:gfx=gfx1201 //:wheel >"$tmp/err.log" 2>&1; then
  fail "gfx1201 was accepted with no compiler for it"
fi
grep -qF "cannot compile device code for gfx1201" "$tmp/err.log" && grep -qF "no second device compiler is configured" "$tmp/err.log" \
  || { tail -20 "$tmp/err.log" >&2; fail "error without a second compiler"; }
echo "PASS"

#!/usr/bin/env bash
# The downstream project (examples/downstream, a copy pointing at this
# checkout) uses rules_rocm as a module (bazel_dep + local_path_override) and
# builds its own HIP library + wheel with --@rules_rocm//:gfx, code in XLA's
# idiom through @local_config_rocm; then the same project as a WORKSPACE-mode
# consumer (local_repository + rules_rocm_dependencies()). Its own Bazel
# server (one per workspace) is shut down at the end to give the memory back.
set -euo pipefail
source "$(dirname "$0")/../lib/scratch_test.sh"
read -ra FLAGS <<<"$(shared_disk_cache)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gfx_downstream.XXXXXX")
trap '(cd "$tmp/downstream" 2>/dev/null && "$BAZEL" shutdown >/dev/null 2>&1) || true; rm -rf "$tmp"' EXIT
# A copy of the project, pointing at this checkout, that takes this
# checkout's rocm-wheel as a prebuilt toolchain: in its own output base the
# tool's crates would compile cold (their action keys name the module they
# come from), which is the tool's cost, not what this test is about.
cp -r "$root/examples/downstream" "$tmp/downstream"
cd "$tmp/downstream"
sed -i "s|path = \"../..\",|path = \"$root\",|" MODULE.bazel WORKSPACE
grep -qF "path = \"$root\"," MODULE.bazel || fail "the copy's local_path_override does not point at $root"
use_prebuilt_tool "$root" || fail "cannot build //tools:rocm-wheel in $root"
PY="${ROCM_WHEEL_VENV:-$root/.venv}/bin/python"
[[ -x $PY ]] || fail "$PY missing: run \`make setup\` first"

# gfx950 and gfx1250 next to an RDNA4 target, from a downstream module.
echo "--- downstream module: --@rules_rocm//:gfx=gfx950-dcgpu,gfx1201,gfx1250"
"$BAZEL" build "${FLAGS[@]}" --@rules_rocm//:gfx=gfx950-dcgpu,gfx1201,gfx1250 //:wheel 2>"$tmp/build.err" \
  || { tail -40 "$tmp/build.err" >&2; fail "downstream build"; }
whl=bazel-bin/downstream_hip-0.1.0-py3-none-manylinux_2_28_x86_64.whl
got=$("$PY" "$root/tests/lib/bundle_targets.py" "$whl" | tr '\n' ' ')
[[ $got == "gfx1201 gfx1250 gfx950 " ]] || fail "downstream wheel bundles hold [$got], want [gfx1201 gfx1250 gfx950]"
# Its own entry first, then where its HIP runtime is installed (rocm_runpath).
runpath=$(unzip -p "$whl" downstream_hip/libdownstream_saxpy.so >"$tmp/lib.so" && readelf -d "$tmp/lib.so" | grep -E 'RUNPATH|RPATH' || true)
[[ $runpath == *'[$ORIGIN/../rocm/lib:$ORIGIN/../_rocm_sdk_core/lib:/opt/rocm/lib]'* ]] || fail "RUNPATH of the downstream library: $runpath"

echo "--- downstream kernel library in upstream idioms: every code object holds its kernels"
"$BAZEL" build "${FLAGS[@]}" --@rules_rocm//:gfx=gfx120X-all //linalg:liblinalg.so 2>"$tmp/build.err" \
  || { tail -40 "$tmp/build.err" >&2; fail "downstream //linalg:liblinalg.so"; }
"$PY" "$root/tests/outputs/hip/check_kernels.py" bazel-bin/linalg/liblinalg.so --targets gfx1200,gfx1201 --bundles 3 \
  _ZN6linalg10batch_dot3IfEEvPKT_S3_PS1_i _ZN6linalg10batch_dot3IdEEvPKT_S3_PS1_i _ZN6linalg10batch_conjEP15HIP_vector_typeIfLj2EEi \
  || fail "downstream liblinalg.so lacks kernels"

echo "--- downstream code in XLA's idiom: @local_config_rocm's rocm_library, hip_runtime, hipblas"
"$BAZEL" build "${FLAGS[@]}" --@rules_rocm//:gfx=gfx120X-all //xla_style:libxla_style.so 2>"$tmp/build.err" \
  || { tail -40 "$tmp/build.err" >&2; fail "downstream //xla_style:libxla_style.so"; }
"$PY" "$root/tests/outputs/hip/check_kernels.py" bazel-bin/xla_style/libxla_style.so --targets gfx1200,gfx1201 --bundles 1 \
  _ZN9xla_style12_GLOBAL__N_112AffineKernelIfEEvT_S2_PKS2_PS2_i \
  || fail "downstream libxla_style.so lacks its kernel"
needed=$(readelf -d bazel-bin/xla_style/libxla_style.so | grep NEEDED)
for lib in libhipblas.so libamdhip64.so; do
  [[ $needed == *"[$lib."* ]] || fail "libxla_style.so does not link $lib: $needed"
done

echo "--- downstream error names the external flag"
if "$BAZEL" build "${FLAGS[@]}" --nobuild --@rules_rocm//:gfx=gfx95O-dcgpu //:wheel >"$tmp/err.log" 2>&1; then
  fail "an unknown family was accepted"
fi
grep -qF -- "--@rules_rocm//:gfx=gfx95O-dcgpu: unknown amdgpu family or gfx target 'gfx95O-dcgpu'. Did you mean 'gfx950-dcgpu'?" "$tmp/err.log" \
  || { tail -20 "$tmp/err.log" >&2; fail "downstream error message"; }
echo "--- WORKSPACE-mode consumer: --enable_workspace --noenable_bzlmod"
# WORKSPACE mode takes a prebuilt rocm-wheel: this checkout's (bzlmod) one.
rw=$PWD/prebuilt_rocm_wheel/rocm-wheel
if "$BAZEL" build "${FLAGS[@]}" --enable_workspace --noenable_bzlmod --nobuild //:wheel >"$tmp/err.log" 2>&1; then
  fail "WORKSPACE mode without a prebuilt rocm-wheel was accepted"
fi
grep -qF "WORKSPACE mode uses a prebuilt rocm-wheel, and none was given" "$tmp/err.log" ||
  { tail -20 "$tmp/err.log" >&2; fail "WORKSPACE mode without rocm-wheel: not the repository's message"; }
"$BAZEL" build "${FLAGS[@]}" --enable_workspace --noenable_bzlmod --repo_env=ROCM_WHEEL="$rw" --@rules_rocm//:gfx=gfx90a //:wheel 2>"$tmp/build.err" \
  || { tail -40 "$tmp/build.err" >&2; fail "downstream WORKSPACE-mode build for gfx90a"; }
got=$("$PY" "$root/tests/lib/bundle_targets.py" "$whl" | tr '\n' ' ')
[[ $got == "gfx90a " ]] || fail "downstream wheel (WORKSPACE mode) holds [$got], want [gfx90a]"
echo "PASS"

#include "rocm/include/hip/hip_runtime.h"
#include "rocm/rocm_config.h"
#include <hipblas/hipblas.h>
static_assert(TF_ROCM_VERSION == 60201, "rocm-core's version header of the fixture");
static_assert(TF_HIPRUNTIME_VERSION == 60200000, "the fixture's hip_version.h");
static_assert(hipblasVersionMajor == 2, "the fixture's hipBLAS");
extern "C" __global__ void blas_user_kernel(int* x) { x[0] = 1; }
extern "C" int blas_user(void) { return hipblasFixtureCall(); }
EOF''')
s=s.replace('''check_fixture "$ws/rocm-6.1" 6.1 plain uncompressed''','''check_fixture "$ws/rocm-6.1" 6.1 plain uncompressed

echo "--- ROCm libraries and headers of a fixture"
read -ra flags <<<"$(with_fixture "$ws/rocm-6.2")"
bz build "${flags[@]}" //:libblas_user.so 2>"$ws/build.err" ||
  { tail -40 "$ws/build.err" >&2; fail "rocm-6.2: build //:libblas_user.so"; }
build_file=$(find "$ob/external" -maxdepth 2 -path '*rocm_hip/BUILD.bazel' | head -1)
grep -A12 '^rocm_library($' "$build_file" | grep -qF 'version = "2.2.0"' ||
  { cat "$build_file" >&2; fail "rocm-6.2: @rocm_hip//:hipblas is not version 2.2.0"; }
readelf -d "$(bz info execution_root 2>/dev/null)/$(bz cquery "${flags[@]}" --output=files //:libblas_user.so 2>/dev/null)" |
  grep -qF '[libhipblas.so]' || fail "rocm-6.2: libblas_user.so does not link libhipblas.so"
read -ra flags <<<"$(with_fixture "$ws/rocm-6.1")"
if bz build "${flags[@]}" --nobuild //:libblas_user.so >"$ws/err.log" 2>&1; then
  fail "rocm-6.1: a hipBLAS user was analysed without hipBLAS"
fi
grep -qF "hipBLAS: hipBLAS is not installed in the ROCm at $ws/rocm-6.1 ($ws/rocm-6.1/include/hipblas/hipblas-version.h is missing); install libhipblas-dev (Debian/Ubuntu) or hipblas" "$ws/err.log" ||
  { tail -20 "$ws/err.log" >&2; fail "rocm-6.1: no clear error for the missing hipBLAS"; }
echo "ok: rocm_headers, rocm_config.h and hipBLAS from the fixture; a missing hipBLAS named at analysis"''')
open(p,'w').write(s)

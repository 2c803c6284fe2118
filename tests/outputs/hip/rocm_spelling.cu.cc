// ROCm headers spelled the way XLA and JAX spell them, and the generated
// rocm/rocm_config.h (@rules_rocm//rocm:rocm_headers).
#include "rocm/include/hip/hip_runtime.h"
#include "rocm/rocm_config.h"

static_assert(TF_ROCM_VERSION >= 60000, "TF_ROCM_VERSION is major * 10000 + minor * 100 + patch");
static_assert(TF_HIPRUNTIME_VERSION / 10000000 == TF_ROCM_VERSION / 10000, "HIP and ROCm majors agree");

namespace rocm_spelling {
__global__ void version_kernel(int* out) { out[threadIdx.x] = TF_ROCM_VERSION; }
int launch(int* out) {
  hipLaunchKernelGGL(version_kernel, dim3(1), dim3(64), 0, 0, out);
  return static_cast<int>(hipGetLastError());
}
}  // namespace rocm_spelling

// hipBLAS and hipSOLVER as JAX's linalg kernels include them: ROCm headers
// spelled "rocm/include/...", the libraries from rocm_libs.
#include <cstring>

#include "rocm/include/hip/hip_runtime.h"
#include "rocm/include/hipblas/hipblas.h"
#include "rocm/include/hipsolver/hipsolver.h"
#include "rocm/rocm_config.h"

namespace linalg_kernels {
// Per-matrix pointers of a strided batch (JAX's make_batch_pointers).
__global__ void make_batch_pointers(char* base, int stride, int n, void** out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = base + static_cast<long>(i) * stride;
}
}  // namespace linalg_kernels

extern "C" int idioms_batch_scal(hipblasHandle_t handle, float* x, int n, void** ptrs) {
  hipLaunchKernelGGL(linalg_kernels::make_batch_pointers, dim3((n + 127) / 128), dim3(128), 0, 0,
                     reinterpret_cast<char*>(x), static_cast<int>(sizeof(float)), n, ptrs);
  const float alpha = 2.0f;
  return hipblasSscal(handle, n, &alpha, x, 1) == HIPBLAS_STATUS_SUCCESS ? 0 : 1;
}

extern "C" int idioms_solver_handle(void) {
  hipsolverHandle_t handle;
  return hipsolverCreate(&handle) == HIPSOLVER_STATUS_SUCCESS ? TF_ROCM_VERSION : 0;
}

// One source, built once per element type: LINALG_REAL_T comes from local_defines.
#include "rocm/include/hip/hip_runtime.h"
#include "rocm/rocm_config.h"
#include "linalg_base/status.h"
#include <TinyEigen/Dense>

#ifndef LINALG_REAL_T
#error "set LINALG_REAL_T in local_defines"
#endif

namespace linalg {
template <typename T>
__global__ void batch_dot3(const T* a, const T* b, T* out, int batch) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < batch) out[i] = TinyEigen::dot3(a + 3 * i, b + 3 * i);
}

Status BatchDot3(const LINALG_REAL_T* a, const LINALG_REAL_T* b, LINALG_REAL_T* out, int batch) {
  if (batch <= 0) return Status::kBadSize;
  hipLaunchKernelGGL(batch_dot3<LINALG_REAL_T>, dim3((batch + 127) / 128), dim3(128), 0, 0, a, b, out, batch);
  return Status::kOk;
}
}  // namespace linalg

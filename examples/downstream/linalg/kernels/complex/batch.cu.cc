// Same basename as kernels/real/batch.cu.cc, in the same library.
#include <hip/hip_runtime.h>
#include <hip/hip_complex.h>
#include "linalg_base/status.h"

namespace linalg {
__global__ void batch_conj(hipFloatComplex* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = hipConjf(x[i]);
}

Status BatchConj(hipFloatComplex* x, int n) {
  if (n <= 0) return Status::kBadSize;
  hipLaunchKernelGGL(batch_conj, dim3((n + 127) / 128), dim3(128), 0, 0, x, n);
  return Status::kOk;
}
}  // namespace linalg

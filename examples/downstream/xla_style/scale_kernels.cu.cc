#include "xla_style/scale_kernels.h"

#include <hip/hip_runtime.h>

namespace xla_style {
namespace {

template <typename T>
__global__ void AffineKernel(T alpha, T beta, const T* x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = alpha * x[i] + beta;
}

}  // namespace

gpuError_t LaunchAffine(gpuStream_t stream, float alpha, float beta, const float* x, float* y, int n) {
  const int block = 256;
  hipLaunchKernelGGL(AffineKernel<float>, dim3((n + block - 1) / block), dim3(block), 0, stream, alpha, beta, x, y, n);
  return hipGetLastError();
}

}  // namespace xla_style

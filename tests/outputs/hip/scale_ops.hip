#include "hipkern/scale_ops.h"
#include "tests/outputs/hip/gen/block_size.h"
namespace hipkern {
__global__ void scale_kernel(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = twice_scaled(x[i]);
}
void launch_scale(float* x, int n) {
  hipLaunchKernelGGL(scale_kernel, dim3((n + BLOCK_SIZE - 1) / BLOCK_SIZE), dim3(BLOCK_SIZE), 0, 0, x, n);
}
}  // namespace hipkern

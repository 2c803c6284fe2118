// A kernel spelled as XLA and JAX spell theirs: "rocm/include/..." headers,
// a .cu.cc source, compiled through @local_config_rocm's rocm_library.
#include "rocm/include/hip/hip_runtime.h"

__global__ void Scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

void LaunchScale(hipStream_t stream, float* x, float a, int n) {
  Scale<<<(n + 255) / 256, 256, 0, stream>>>(x, a, n);
}

// One source, one kernel per define: XLA's hipCUB sort targets are written
// this way (local_defines = ["CUB_TYPE_F32"], ...).
#include <hip/hip_runtime.h>
#if defined(CUB_TYPE_F32)
using value_type = float;
#define FILL_KERNEL fill_f32
#elif defined(CUB_TYPE_F64)
using value_type = double;
#define FILL_KERNEL fill_f64
#else
#error "define CUB_TYPE_F32 or CUB_TYPE_F64"
#endif
__global__ void FILL_KERNEL(value_type* x, value_type v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}
void launch_fill(value_type* x, value_type v, int n) {
  hipLaunchKernelGGL(FILL_KERNEL, dim3((n + 255) / 256), dim3(256), 0, 0, x, v, n);
}

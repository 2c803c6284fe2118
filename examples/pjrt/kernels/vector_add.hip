// Self-contained device code: no HIP headers on the device side, so both the
// ROCm clang and the second compiler (zig clang) build it for every family.
#include "examples/pjrt/kernels/kernels.h"

#if defined(__HIP_DEVICE_COMPILE__)
#ifndef __global__
#define __global__ __attribute__((global))
#endif
#else
#include <hip/hip_runtime.h>
#endif

extern "C" __global__ void xla_rocm7_vector_add(const float* a, const float* b, float* out, int n) {
  int i = static_cast<int>(__builtin_amdgcn_workgroup_id_x() * 256u + __builtin_amdgcn_workitem_id_x());
  if (i < n) out[i] = a[i] + b[i];
}

#if !defined(__HIP_DEVICE_COMPILE__)
extern "C" int xla_rocm7_launch_vector_add(const float* a, const float* b, float* out, int n, void* stream) {
  if (n <= 0) return 0;
  hipLaunchKernelGGL(xla_rocm7_vector_add, dim3((n + 255) / 256), dim3(256), 0,
                     static_cast<hipStream_t>(stream), a, b, out, n);
  return static_cast<int>(hipGetLastError());
}
#endif

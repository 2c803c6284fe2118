// Self-contained device code (no HIP headers on the device side).
#if defined(__HIP_DEVICE_COMPILE__)
#ifndef __global__
#define __global__ __attribute__((global))
#endif
#else
#include <hip/hip_runtime.h>
#endif

extern "C" __global__ void downstream_saxpy(float a, const float* x, float* y, int n) {
  int i = static_cast<int>(__builtin_amdgcn_workgroup_id_x() * 256u + __builtin_amdgcn_workitem_id_x());
  if (i < n) y[i] = a * x[i] + y[i];
}

#if !defined(__HIP_DEVICE_COMPILE__)
extern "C" int downstream_launch_saxpy(float a, const float* x, float* y, int n) {
  if (n <= 0) return 0;
  hipLaunchKernelGGL(downstream_saxpy, dim3((n + 255) / 256), dim3(256), 0, 0, a, x, y, n);
  return static_cast<int>(hipGetLastError());
}
#endif

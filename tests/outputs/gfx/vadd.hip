#if defined(__HIP_DEVICE_COMPILE__)
#ifndef __global__
#define __global__ __attribute__((global))
#endif
#else
#include <hip/hip_runtime.h>
#endif
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i < n) c[i] = a[i] + b[i];
}
#ifndef __HIP_DEVICE_COMPILE__
extern "C" int launch_vadd(const float* a, const float* b, float* c, int n) {
  hipLaunchKernelGGL(vadd, dim3((n+255)/256), dim3(256), 0, 0, a, b, c, n);
  return (int)hipGetLastError();
}
#endif

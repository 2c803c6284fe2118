// Same path below its package as ../hip_basename/a/k.hip: their outputs must not collide.
#if defined(__HIP_DEVICE_COMPILE__)
#ifndef __global__
#define __global__ __attribute__((global))
#endif
#else
#include <hip/hip_runtime.h>
#endif
extern "C" __global__ void scale_sub(float* x, int n) {
  int i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i < n) x[i] *= 2.0f;
}

// Installed as "hipkern/scale_ops.h" (strip_include_prefix + include_prefix).
#pragma once
#include <hip/hip_runtime.h>
#include <Eigen/Core>
namespace hipkern {
__device__ inline float twice_scaled(float x) { return 2.0f * Eigen::scale(x); }
void launch_scale(float* x, int n);
}  // namespace hipkern

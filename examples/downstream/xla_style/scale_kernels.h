#ifndef XLA_STYLE_SCALE_KERNELS_H_
#define XLA_STYLE_SCALE_KERNELS_H_

#include "xla_style/vendor.h"

namespace xla_style {

// y[i] = alpha * x[i] + beta, for n elements, on `stream`.
gpuError_t LaunchAffine(gpuStream_t stream, float alpha, float beta, const float* x, float* y, int n);

}  // namespace xla_style

#endif  // XLA_STYLE_SCALE_KERNELS_H_

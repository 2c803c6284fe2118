#include "xla_style/scale.h"

#include <hipblas/hipblas.h>

#include "xla_style/scale_kernels.h"
#include "xla_style/vendor.h"

#ifndef XLA_STYLE_HIP
#error "if_rocm_is_configured() did not add -DXLA_STYLE_HIP"
#endif

extern "C" int xla_style_scale_affine(float alpha, float beta, float* device_x, int n) {
  hipblasHandle_t handle;
  hipblasStatus_t status = hipblasCreate(&handle);
  if (status != HIPBLAS_STATUS_SUCCESS) return 1000 + status;
  status = hipblasSscal(handle, n, &alpha, device_x, 1);
  hipblasDestroy(handle);
  if (status != HIPBLAS_STATUS_SUCCESS) return 1000 + status;
  return xla_style::LaunchAffine(nullptr, 1.0f, beta, device_x, device_x, n);
}

// Uses a dependent's virtual include path ("hipkern/...") and an absl-like
// header: device code must see both, as host code does.
#include "absl/status/status.h"
#include "hipkern/scale_ops.h"
namespace ops {
template <typename T>
__global__ void checked_scale(T* x, int n, int* status) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = Eigen::scale(x[i]);
  if (i == 0) *status = static_cast<int>(n > 0 ? absl::StatusCode::kOk : absl::StatusCode::kInvalidArgument);
}
int launch_checked(float* x, int n, int* status) {
  hipLaunchKernelGGL(checked_scale<float>, dim3((n + 255) / 256), dim3(256), 0, 0, x, n, status);
  return static_cast<int>(hipGetLastError());
}
}  // namespace ops

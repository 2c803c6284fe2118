#pragma once
#include <hip/hip_runtime.h>
#ifndef EIGENISH_SCALE
#error "EIGENISH_SCALE comes from the eigenish cc_library's defines"
#endif
namespace Eigen {
template <typename T>
__host__ __device__ inline T scale(T x) { return x * T(EIGENISH_SCALE); }
}  // namespace Eigen

// rocPRIM radix sort: needs ROCm's headers and device libraries, so only the
// ROCm clang builds it (hip_library(skip_unsupported_targets = True)).
// <cstring> first: rocPRIM 4.2's texture_cache_iterator.hpp calls memset without it.
#include <cstring>
#include <hip/hip_runtime.h>
#include <rocprim/rocprim.hpp>

#include "examples/pjrt/kernels/kernels.h"

extern "C" int xla_rocm7_sort_pairs(const float* keys_in, float* keys_out, const int* values_in,
                                    int* values_out, int n, void* stream) {
  if (n <= 0) return 0;
  hipStream_t s = static_cast<hipStream_t>(stream);
  size_t temp_bytes = 0;
  hipError_t err = rocprim::radix_sort_pairs(nullptr, temp_bytes, keys_in, keys_out, values_in,
                                             values_out, static_cast<unsigned int>(n), 0,
                                             8 * sizeof(float), s);
  if (err != hipSuccess) return static_cast<int>(err);
  void* temp = nullptr;
  err = hipMalloc(&temp, temp_bytes);
  if (err != hipSuccess) return static_cast<int>(err);
  err = rocprim::radix_sort_pairs(temp, temp_bytes, keys_in, keys_out, values_in, values_out,
                                  static_cast<unsigned int>(n), 0, 8 * sizeof(float), s);
  hipError_t free_err = hipFree(temp);
  return static_cast<int>(err != hipSuccess ? err : free_err);
}

// A rocPRIM reduction: device code that needs rocPRIM's headers and the
// device libraries, for the library-refusal tests (rocprim_skip).
// <cstring> first: rocPRIM 4.2's texture_cache_iterator.hpp calls memset without it.
#include <cstring>
#include <hip/hip_runtime.h>
#include <rocprim/rocprim.hpp>

extern "C" int rules_rocm_test_sum(const int* in, int* out, unsigned int n, void* stream) {
  size_t temp_bytes = 0;
  hipStream_t s = static_cast<hipStream_t>(stream);
  hipError_t err = rocprim::reduce(nullptr, temp_bytes, in, out, 0, n, rocprim::plus<int>(), s);
  if (err != hipSuccess) return static_cast<int>(err);
  void* temp = nullptr;
  err = hipMalloc(&temp, temp_bytes);
  if (err != hipSuccess) return static_cast<int>(err);
  err = rocprim::reduce(temp, temp_bytes, in, out, 0, n, rocprim::plus<int>(), s);
  hipError_t free_err = hipFree(temp);
  return static_cast<int>(err != hipSuccess ? err : free_err);
}

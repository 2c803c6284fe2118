// Benchmark TU: rocPRIM radix sort for two key/value types (the shape of
// XLA's ROCm sort kernels). nonce.h is written by run.sh so every measured
// build starts cold.
// <cstring> first: rocPRIM 4.2's texture_cache_iterator.hpp calls memset without it.
#include <cstring>
#include <hip/hip_runtime.h>
#include <rocprim/rocprim.hpp>

#include <cstdint>

#include "bench/hip_split/nonce.h"

template <typename K, typename V>
static hipError_t sort_pairs(const K* kin, K* kout, const V* vin, V* vout, unsigned int n, hipStream_t s) {
  size_t bytes = 0;
  hipError_t err = rocprim::radix_sort_pairs(nullptr, bytes, kin, kout, vin, vout, n, 0, 8 * sizeof(K), s);
  if (err != hipSuccess) return err;
  void* tmp = nullptr;
  if ((err = hipMalloc(&tmp, bytes)) != hipSuccess) return err;
  err = rocprim::radix_sort_pairs(tmp, bytes, kin, kout, vin, vout, n, 0, 8 * sizeof(K), s);
  hipError_t ferr = hipFree(tmp);
  return err != hipSuccess ? err : ferr;
}

extern "C" int bench_sort_f32_i32(const float* kin, float* kout, const int* vin, int* vout, unsigned int n) {
  return static_cast<int>(sort_pairs(kin, kout, vin, vout, n, nullptr));
}

extern "C" int bench_sort_u64_f64(const std::uint64_t* kin, std::uint64_t* kout, const double* vin, double* vout,
                                  unsigned int n) {
  return static_cast<int>(sort_pairs(kin, kout, vin, vout, n, nullptr));
}

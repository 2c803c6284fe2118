// C ABI of the example's HIP kernels (host launchers). Return hipError_t codes.
#ifndef EXAMPLES_PJRT_KERNELS_KERNELS_H_
#define EXAMPLES_PJRT_KERNELS_KERNELS_H_

#ifdef __cplusplus
extern "C" {
#endif

int xla_rocm7_launch_vector_add(const float* a, const float* b, float* out, int n, void* stream);

// Sorts `n` (key, value) pairs by key on the device (rocPRIM radix sort).
// Device code exists only for targets the ROCm clang compiles; elsewhere
// this returns hipErrorNoBinaryForGpu at run time.
int xla_rocm7_sort_pairs(const float* keys_in, float* keys_out, const int* values_in, int* values_out,
                         int n, void* stream);

#ifdef __cplusplus
}
#endif

#endif  // EXAMPLES_PJRT_KERNELS_KERNELS_H_

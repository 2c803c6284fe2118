// Python-independent shared library linked by every Python version's
// extension modules (a stand-in for the HIP library of //examples/pjrt).
#ifndef RULES_ROCM_EXAMPLES_PLUGIN_KERNELS_H_
#define RULES_ROCM_EXAMPLES_PLUGIN_KERNELS_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PLUGIN_KERNELS_API __attribute__((visibility("default")))

// y[i] = a * x[i] + y[i] for i < n.
PLUGIN_KERNELS_API void plugin_kernels_saxpy(float a, const float* x, float* y,
                                             size_t n);

// SplitMix64 step: the n-th output of the generator seeded with `seed`.
PLUGIN_KERNELS_API uint64_t plugin_kernels_splitmix64(uint64_t seed, uint64_t n);

// Identifies the library build ("plugin_kernels <version>").
PLUGIN_KERNELS_API const char* plugin_kernels_name(void);

#ifdef __cplusplus
}
#endif

#endif  // RULES_ROCM_EXAMPLES_PLUGIN_KERNELS_H_

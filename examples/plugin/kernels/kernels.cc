#include "examples/plugin/kernels/kernels.h"

extern "C" {

void plugin_kernels_saxpy(float a, const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}

uint64_t plugin_kernels_splitmix64(uint64_t seed, uint64_t n) {
  uint64_t state = seed;
  uint64_t z = 0;
  for (uint64_t i = 0; i <= n; ++i) {
    state += 0x9e3779b97f4a7c15ULL;
    z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z = z ^ (z >> 31);
  }
  return z;
}

const char* plugin_kernels_name(void) { return "plugin_kernels 1"; }

}  // extern "C"

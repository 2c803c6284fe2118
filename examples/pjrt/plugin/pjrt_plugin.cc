// A PJRT-shaped C-API plugin: exports GetPjrtApi like XLA's
// xla_rocm_plugin.so, backed by this example's HIP kernels. Only the API
// header (struct size, extension chain, version) follows PJRT's layout; the
// function table is this example's own.
#include <cstddef>
#include <cstring>

#include "examples/pjrt/kernels/kernels.h"

#ifndef XLA_ROCM7_GFX_TARGETS
#error "XLA_ROCM7_GFX_TARGETS must be defined by the build (the --//:gfx expansion)"
#endif

extern "C" {

typedef struct PJRT_Extension_Base PJRT_Extension_Base;

typedef struct PJRT_Api_Version {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  int major_version;
  int minor_version;
} PJRT_Api_Version;

typedef struct PJRT_Api {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Api_Version pjrt_api_version;
  // Example function table (not PJRT's).
  const char* (*gfx_targets)(void);
  int (*vector_add)(const float*, const float*, float*, int, void*);
  int (*sort_pairs)(const float*, float*, const int*, int*, int, void*);
} PJRT_Api;

static const char* GfxTargets(void) { return XLA_ROCM7_GFX_TARGETS; }

__attribute__((visibility("default"))) const PJRT_Api* GetPjrtApi(void) {
  static const PJRT_Api api = {
      sizeof(PJRT_Api),
      nullptr,
      {sizeof(PJRT_Api_Version), nullptr, 0, 54},
      &GfxTargets,
      &xla_rocm7_launch_vector_add,
      &xla_rocm7_sort_pairs,
  };
  return &api;
}

}  // extern "C"

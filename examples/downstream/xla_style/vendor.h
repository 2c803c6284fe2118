// The one place that names the GPU runtime, as jaxlib/gpu/vendor.h does.
#ifndef XLA_STYLE_VENDOR_H_
#define XLA_STYLE_VENDOR_H_

#include <hip/hip_runtime_api.h>

#define gpuStream_t hipStream_t
#define gpuError_t hipError_t
#define gpuSuccess hipSuccess

#endif  // XLA_STYLE_VENDOR_H_

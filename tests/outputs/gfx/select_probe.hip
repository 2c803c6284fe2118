// Built in each gfx device configuration: the select() on
// //platforms/gfx:is_<gfx> in BUILD must agree with the compiler's own
// target macro, or this fails to compile.
#if defined(__HIP_DEVICE_COMPILE__)
#if defined(EXPECT_GFX1200) != defined(__gfx1200__) || defined(EXPECT_GFX1201) != defined(__gfx1201__)
#error "select() on //platforms/gfx:is_<gfx> disagrees with the device target"
#endif
#if !defined(EXPECT_GFX1200) && !defined(EXPECT_GFX1201) && !defined(EXPECT_OTHER)
#error "no branch of the device select() applied"
#endif
#ifndef __global__
#define __global__ __attribute__((global))
#endif
#else
#include <hip/hip_runtime.h>
#endif

extern "C" __global__ void select_probe(int* out) { out[0] = 1; }

// Host and device deliberately disagree (device_copts = ["-DNO_KERNELS"]):
// the build must fail in the kernel check, not at launch.
#include <hip/hip_runtime.h>
#ifndef NO_KERNELS
__global__ void only_on_host_side(int* x) { x[threadIdx.x] = 1; }
#endif
__global__ void on_both_sides(int* x) { x[threadIdx.x] = 2; }

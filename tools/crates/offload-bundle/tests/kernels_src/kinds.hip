// Every kind of kernel name the host/device check maps: a namespace whose
// name ends in a digit (ambiguous length prefix), a template, extern "C",
// an internal-linkage kernel, and one the device compile loses with -DNO_KERNELS.
#include <hip/hip_runtime.h>
namespace a2 { __global__ void k(float* x) { x[0] = 1; } }
template <typename T> __global__ void tk(T* x) { x[0] = 2; }
extern "C" __global__ void ck(int* x) { x[0] = 3; }
static __global__ void sk(int* x) { x[0] = 4; }
#ifndef NO_KERNELS
__global__ void only_host_side(int* x) {}
#endif
void launch(float* f, double* d, int* i) {
  hipLaunchKernelGGL(a2::k, 1, 1, 0, 0, f);
  hipLaunchKernelGGL(tk<double>, 1, 1, 0, 0, d);
  hipLaunchKernelGGL(ck, 1, 1, 0, 0, i);
  hipLaunchKernelGGL(sk, 1, 1, 0, 0, i);
}

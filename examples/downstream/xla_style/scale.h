#ifndef XLA_STYLE_SCALE_H_
#define XLA_STYLE_SCALE_H_

extern "C" {
// hipblasSscal then an affine kernel, on the default stream; a hipError_t
// (or hipblasStatus_t + 1000) code.
int xla_style_scale_affine(float alpha, float beta, float* device_x, int n);
}

#endif  // XLA_STYLE_SCALE_H_

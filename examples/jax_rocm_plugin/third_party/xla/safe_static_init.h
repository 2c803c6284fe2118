// STAND-IN for XLA's xla/python/safe_static_init.h, written for
// examples/jax_rocm_plugin: the real header is not available on the machine
// this example was written on. Same API as XLA's: a function-local static
// initialised on first use by `init`, which returns a std::unique_ptr<T>.
// XLA's version also guards against deadlocks between the GIL and C++
// static initialisation; here every caller (jaxlib/gpu/hybrid.cc) holds the
// GIL, which serialises initialisation.
#ifndef XLA_PYTHON_SAFE_STATIC_INIT_H_
#define XLA_PYTHON_SAFE_STATIC_INIT_H_

#include <memory>
#include <utility>

namespace xla {

template <typename T>
class SafeStatic {
 public:
  template <typename F>
  T& Get(F&& init) {
    if (!value_) value_ = std::forward<F>(init)();
    return *value_;
  }

 private:
  std::unique_ptr<T> value_;
};

}  // namespace xla

#endif  // XLA_PYTHON_SAFE_STATIC_INIT_H_

// STAND-IN for XLA's xla/tsl/python/lib/core/numpy.h, written for
// examples/jax_rocm_plugin: the real header is not available on the machine
// this example was written on. Same API as XLA's: NumPy's C API under one
// PY_ARRAY_UNIQUE_SYMBOL, defined (and filled by tsl::ImportNumpy()) in
// XLA's numpy.cc, which defines XLA_IMPORT_NUMPY before including this.
#ifndef XLA_TSL_PYTHON_LIB_CORE_NUMPY_H_
#define XLA_TSL_PYTHON_LIB_CORE_NUMPY_H_

#ifdef PyArray_Type
#error "Numpy cannot be included before numpy.h."
#endif

// Disallow NumPy 1.7's deprecated symbols.
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION

// One API table per shared object: the module's version script keeps it
// private to the module.
#define PY_ARRAY_UNIQUE_SYMBOL _xla_numpy_api
#ifndef XLA_IMPORT_NUMPY
#define NO_IMPORT_ARRAY
#endif
#define NPY_API_SYMBOL_ATTRIBUTE

// clang-format off: Python.h before NumPy's headers.
#include <Python.h>

#include "numpy/arrayobject.h"
#include "numpy/ndarraytypes.h"
#include "numpy/npy_common.h"
#include "numpy/numpyconfig.h"
#include "numpy/ufuncobject.h"
// clang-format on

namespace tsl {

// Fills the API table: call once (with the GIL) before using NumPy's C API.
void ImportNumpy();

}  // namespace tsl

#endif  // XLA_TSL_PYTHON_LIB_CORE_NUMPY_H_

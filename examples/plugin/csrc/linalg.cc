// jax_rocm7_plugin._linalg: per-Python-version extension over the shared,
// Python-independent kernels library.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "examples/plugin/kernels/kernels.h"

namespace {

// saxpy(a, x, y) -> list: a * x + y elementwise, computed by the shared library.
PyObject* Saxpy(PyObject*, PyObject* args) {
  float a = 0;
  PyObject* xs = nullptr;
  PyObject* ys = nullptr;
  if (!PyArg_ParseTuple(args, "fOO:saxpy", &a, &xs, &ys)) return nullptr;
  PyObject* fx = PySequence_Fast(xs, "saxpy: x must be a sequence");
  if (fx == nullptr) return nullptr;
  PyObject* fy = PySequence_Fast(ys, "saxpy: y must be a sequence");
  if (fy == nullptr) {
    Py_DECREF(fx);
    return nullptr;
  }
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(fx);
  PyObject* out = nullptr;
  if (n != PySequence_Fast_GET_SIZE(fy)) {
    PyErr_SetString(PyExc_ValueError, "saxpy: x and y differ in length");
  } else {
    // PyMem rather than std::vector: no newer libstdc++ symbol versions,
    // so the wheel stays manylinux_2_28.
    float* x = static_cast<float*>(PyMem_Malloc(sizeof(float) * (n ? n : 1)));
    float* y = static_cast<float*>(PyMem_Malloc(sizeof(float) * (n ? n : 1)));
    if (x == nullptr || y == nullptr) {
      PyMem_Free(x);
      PyMem_Free(y);
      Py_DECREF(fx);
      Py_DECREF(fy);
      return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
      x[i] = static_cast<float>(PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fx, i)));
      y[i] = static_cast<float>(PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fy, i)));
    }
    if (!PyErr_Occurred()) {
      plugin_kernels_saxpy(a, x, y, static_cast<size_t>(n));
      out = PyList_New(n);
      for (Py_ssize_t i = 0; out != nullptr && i < n; ++i) {
        PyList_SET_ITEM(out, i, PyFloat_FromDouble(y[i]));
      }
    }
    PyMem_Free(x);
    PyMem_Free(y);
  }
  Py_DECREF(fx);
  Py_DECREF(fy);
  return out;
}

PyObject* KernelsName(PyObject*, PyObject*) {
  return PyUnicode_FromString(plugin_kernels_name());
}

PyMethodDef kMethods[] = {
    {"saxpy", Saxpy, METH_VARARGS, "a * x + y, computed by the kernels library."},
    {"kernels_name", KernelsName, METH_NOARGS, "Name of the linked kernels library."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef kModule = {
    PyModuleDef_HEAD_INIT, "_linalg", "Linear algebra over the kernels library.", -1,
    kMethods, nullptr, nullptr, nullptr, nullptr,
};

}  // namespace

PyMODINIT_FUNC PyInit__linalg(void) { return PyModule_Create(&kModule); }

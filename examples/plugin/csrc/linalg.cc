// example_rocm_plugin._linalg: per-Python-version extension module linking the
// Python-independent HIP kernels library of //examples/pjrt.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "examples/pjrt/kernels/kernels.h"

namespace {

// saxpy(a, x, y) -> list: a * x[i] + y[i], computed here in C++.
PyObject* Saxpy(PyObject*, PyObject* args) {
  double a = 0;
  PyObject* xs = nullptr;
  PyObject* ys = nullptr;
  if (!PyArg_ParseTuple(args, "dOO:saxpy", &a, &xs, &ys)) return nullptr;
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
  } else if ((out = PyList_New(n)) != nullptr) {
    for (Py_ssize_t i = 0; i < n; ++i) {
      const double x = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fx, i));
      const double y = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fy, i));
      if (PyErr_Occurred()) {
        Py_CLEAR(out);
        break;
      }
      PyList_SET_ITEM(out, i, PyFloat_FromDouble(a * x + y));
    }
  }
  Py_DECREF(fx);
  Py_DECREF(fy);
  return out;
}

// Calls into the shared HIP library with an empty launch (no device needed):
// proves the module resolved it from the installed wheel. Returns hipError_t.
PyObject* HipEmptyLaunch(PyObject*, PyObject*) {
  return PyLong_FromLong(xla_rocm7_launch_vector_add(nullptr, nullptr, nullptr, 0, nullptr));
}

PyMethodDef kMethods[] = {
    {"saxpy", Saxpy, METH_VARARGS, "a * x + y, computed in C++."},
    {"hip_empty_launch", HipEmptyLaunch, METH_NOARGS,
     "Empty vector_add launch through the HIP kernels library (returns hipError_t)."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef kModule = {
    PyModuleDef_HEAD_INIT, "_linalg", "Linear algebra over the HIP kernels library.", -1,
    kMethods, nullptr, nullptr, nullptr, nullptr,
};

}  // namespace

PyMODINIT_FUNC PyInit__linalg(void) { return PyModule_Create(&kModule); }

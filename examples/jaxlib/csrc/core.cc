// example_jaxlib._core: a C++ extension module compiled once per Python
// version against that version's headers.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

namespace {

// dot(a, b): sum of a[i] * b[i] over two equal-length sequences of numbers,
// computed here in C++ (the tests compare it with a Python computation).
PyObject* Dot(PyObject*, PyObject* args) {
  PyObject* a = nullptr;
  PyObject* b = nullptr;
  if (!PyArg_ParseTuple(args, "OO:dot", &a, &b)) return nullptr;
  PyObject* fa = PySequence_Fast(a, "dot: a must be a sequence of numbers");
  if (fa == nullptr) return nullptr;
  PyObject* fb = PySequence_Fast(b, "dot: b must be a sequence of numbers");
  if (fb == nullptr) {
    Py_DECREF(fa);
    return nullptr;
  }
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(fa);
  PyObject* result = nullptr;
  if (n != PySequence_Fast_GET_SIZE(fb)) {
    PyErr_Format(PyExc_ValueError, "dot: lengths differ (%zd and %zd)", n,
                 PySequence_Fast_GET_SIZE(fb));
  } else {
    double acc = 0.0;
    bool ok = true;
    for (Py_ssize_t i = 0; i < n && ok; ++i) {
      const double x = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fa, i));
      const double y = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fb, i));
      ok = PyErr_Occurred() == nullptr;
      acc += x * y;
    }
    if (ok) result = PyFloat_FromDouble(acc);
  }
  Py_DECREF(fa);
  Py_DECREF(fb);
  return result;
}

// The Python version of the headers this module was compiled against: the
// tests check it equals the interpreter that imports it.
PyObject* CompiledFor(PyObject*, PyObject*) {
  return PyUnicode_FromString(PY_VERSION);
}

PyMethodDef kMethods[] = {
    {"dot", Dot, METH_VARARGS, "Dot product of two sequences, computed in C++."},
    {"compiled_for", CompiledFor, METH_NOARGS, "PY_VERSION of the build headers."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef kModule = {
    PyModuleDef_HEAD_INIT, "_core", "C++ core of example_jaxlib.", -1, kMethods,
    nullptr, nullptr, nullptr, nullptr,
};

}  // namespace

PyMODINIT_FUNC PyInit__core(void) { return PyModule_Create(&kModule); }

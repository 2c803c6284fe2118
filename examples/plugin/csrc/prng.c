/* jax_rocm7_plugin._prng: per-Python-version C extension over the shared
 * kernels library. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "examples/plugin/kernels/kernels.h"

/* splitmix64(seed, n) -> int: n-th output, computed by the kernels library. */
static PyObject* splitmix64(PyObject* self, PyObject* args) {
  unsigned long long seed = 0, n = 0;
  (void)self;
  if (!PyArg_ParseTuple(args, "KK:splitmix64", &seed, &n)) return NULL;
  return PyLong_FromUnsignedLongLong(plugin_kernels_splitmix64(seed, n));
}

static PyMethodDef methods[] = {
    {"splitmix64", splitmix64, METH_VARARGS, "SplitMix64 output, computed in C."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_prng", "PRNG over the kernels library.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__prng(void) { return PyModule_Create(&module); }

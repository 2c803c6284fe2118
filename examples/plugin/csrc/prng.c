/* example_rocm_plugin._prng: per-Python-version C extension module linking the
 * Python-independent HIP kernels library of //examples/pjrt. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#include "examples/pjrt/kernels/kernels.h"

/* splitmix64(seed, n) -> int: the n-th SplitMix64 output, computed in C. */
static PyObject* splitmix64(PyObject* self, PyObject* args) {
  unsigned long long seed = 0, n = 0;
  (void)self;
  if (!PyArg_ParseTuple(args, "KK:splitmix64", &seed, &n)) return NULL;
  uint64_t state = seed, z = 0;
  for (unsigned long long i = 0; i <= n; ++i) {
    state += 0x9e3779b97f4a7c15ULL;
    z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z = z ^ (z >> 31);
  }
  return PyLong_FromUnsignedLongLong(z);
}

/* Empty radix sort through the HIP kernels library (no device needed). */
static PyObject* hip_empty_sort(PyObject* self, PyObject* args) {
  (void)self;
  (void)args;
  return PyLong_FromLong(xla_rocm7_sort_pairs(NULL, NULL, NULL, NULL, 0, NULL));
}

static PyMethodDef methods[] = {
    {"splitmix64", splitmix64, METH_VARARGS, "SplitMix64 output, computed in C."},
    {"hip_empty_sort", hip_empty_sort, METH_NOARGS,
     "Empty sort through the HIP kernels library (returns hipError_t)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_prng", "PRNG helpers.", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__prng(void) { return PyModule_Create(&module); }

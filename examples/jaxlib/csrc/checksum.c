/* example_jaxlib._checksum: a C extension module (adler32 of a buffer). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* adler32(data) -> int, the same value as zlib.adler32 (the tests' oracle). */
static PyObject* adler32(PyObject* self, PyObject* args) {
  Py_buffer buf;
  (void)self;
  if (!PyArg_ParseTuple(args, "y*:adler32", &buf)) return NULL;
  const unsigned char* p = (const unsigned char*)buf.buf;
  uint32_t a = 1, b = 0;
  for (Py_ssize_t i = 0; i < buf.len; ++i) {
    a = (a + p[i]) % 65521u;
    b = (b + a) % 65521u;
  }
  PyBuffer_Release(&buf);
  return PyLong_FromUnsignedLong(((unsigned long)b << 16) | a);
}

static PyMethodDef methods[] = {
    {"adler32", adler32, METH_VARARGS, "Adler-32 checksum, computed in C."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_checksum", "C checksum helpers.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__checksum(void) { return PyModule_Create(&module); }

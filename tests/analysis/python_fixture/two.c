#include <Python.h>

int fixture_per_python(void);
int fixture_independent(void);

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_two", NULL, -1, NULL};

PyMODINIT_FUNC PyInit__two(void) {
  return fixture_per_python() && fixture_independent() ? PyModule_Create(&module) : NULL;
}

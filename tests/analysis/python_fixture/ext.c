#include <Python.h>

int fixture_shared(void);

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_ext", NULL, -1, NULL};

PyMODINIT_FUNC PyInit__ext(void) { return fixture_shared() ? PyModule_Create(&module) : NULL; }

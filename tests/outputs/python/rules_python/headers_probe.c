// Compiled against @rules_python//python/cc:current_py_cc_headers under a
// transition to one Python version: the headers must be that version's.
#include <Python.h>
#include <stdio.h>
#include <string.h>

_Static_assert(PY_MAJOR_VERSION == 3 && PY_MINOR_VERSION == WANT_MINOR,
               "current_py_cc_headers are not the selected Python's");

int main(void) {
  printf("Python.h of %s\n", PY_VERSION);
  return 0;
}

int fixture_common(void);
int fixture_per_python(void) { return fixture_common(); }

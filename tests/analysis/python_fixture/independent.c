int fixture_common(void);
int fixture_independent(void) { return fixture_common(); }

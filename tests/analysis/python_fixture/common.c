int fixture_common(void) { return 1; }

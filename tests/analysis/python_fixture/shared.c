int fixture_shared(void) { return 1; }

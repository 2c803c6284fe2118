"""A package for the analysis tests' wheels (never built into a real wheel by tests)."""

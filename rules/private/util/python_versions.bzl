"""Python minor versions as strings: what rules, flags and repository rules share."""

# The Python versions the jax-rocm7 wheels ship for.
DEFAULT_PYTHON_VERSIONS = ["3.11", "3.12", "3.13", "3.14"]

# The first CPython with a free-threaded build (PEP 703): "3.13t".
FIRST_FREETHREADED_MINOR = 13

def version_key(v):
    """Sort key of a dotted numeric version: "3.9" before "3.10" (glibc's "2.2.5" before "2.28" too); "3.14t" right after "3.14"."""
    split = split_python_version(v)
    return [int(p) for p in split.minor.split(".")] + ([1] if split.freethreaded else [])

def split_python_version(v):
    """A version entry ("3.14", "3.14t") as struct(minor = "3.14", freethreaded = bool)."""
    if v.endswith("t"):
        return struct(minor = v[:-1], freethreaded = True)
    return struct(minor = v, freethreaded = False)

def is_minor_version(v):
    """Whether `v` is a CPython 3 minor version such as "3.12", or a free-threaded one such as "3.14t" (no leading zeros)."""
    split = split_python_version(v)
    parts = split.minor.split(".")
    if len(parts) != 2:
        return False
    for p in parts:
        if not p.isdigit() or (len(p) > 1 and p[0] == "0"):
            return False
    if split.freethreaded and int(parts[1]) < FIRST_FREETHREADED_MINOR:
        return False
    return parts[0] == "3"

def check_python_versions(versions, where):
    """Fails naming `where` when a version is not a CPython 3 minor version or repeats."""
    if not versions:
        fail("{}: no Python version given; list at least one, e.g. [\"3.12\"]".format(where))
    seen = {}
    for v in versions:
        if not is_minor_version(v):
            fail("{}: '{}' is not a Python minor version such as \"3.12\" (free-threaded: \"3.14t\", 3.13t and later)".format(where, v))
        if v in seen:
            fail("{}: Python {} is listed twice".format(where, v))
        seen[v] = True

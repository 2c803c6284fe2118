"""Wheel file names (PEP 427, with the distribution normalized as PEP 503 spells it) and member names."""

_SEPARATORS = "-_."

def normalize_distribution(name):
    """The wheel-file-name spelling: runs of -_. become one _, lower case."""
    out = []
    in_sep = False
    for i in range(len(name)):
        c = name[i]
        if c in _SEPARATORS:
            if not in_sep:
                out.append("_")
            in_sep = True
        else:
            out.append(c.lower())
            in_sep = False
    return "".join(out)

def wheel_file_name(distribution, version, tag):
    """`<normalized distribution>-<version>-<tag>.whl`."""
    return "{}-{}-{}.whl".format(normalize_distribution(distribution), version, tag)

def is_shared_object(path):
    """Whether a wheel member path names a shared object (`x.so`, `libx.so.1`)."""
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".so") or ".so." in name

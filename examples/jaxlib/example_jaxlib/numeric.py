"""Pure-Python front end of the compiled helpers."""

from example_jaxlib import _checksum, _core


def dot(a, b):
    """Dot product, computed by the C++ extension."""
    return _core.dot(list(a), list(b))


def checksum(data: bytes) -> int:
    """Adler-32 of `data`, computed by the C extension."""
    return _checksum.adler32(bytes(data))


def compiled_for() -> str:
    """Python version whose headers the extensions were compiled against."""
    return _core.compiled_for()

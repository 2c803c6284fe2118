"""A jax_rocm7_plugin-shaped package: extension modules per Python version
linking one Python-independent shared library shipped in the wheel."""

from jax_rocm7_plugin import _linalg, _prng
from jax_rocm7_plugin.version import __version__


def saxpy(a, x, y):
    """a * x + y, computed by the shared kernels library."""
    return _linalg.saxpy(a, list(x), list(y))


def splitmix64(seed, n=0):
    """n-th SplitMix64 output for `seed`, computed by the shared kernels library."""
    return _prng.splitmix64(seed, n)


__all__ = ["saxpy", "splitmix64", "__version__"]

"""A example_rocm_plugin-shaped package: extension modules per Python version
linking one Python-independent HIP library shipped in the wheel."""

from example_rocm_plugin import _linalg, _prng
from example_rocm_plugin.version import __version__


def saxpy(a, x, y):
    """a * x + y, computed in C++."""
    return _linalg.saxpy(a, list(x), list(y))


def splitmix64(seed, n=0):
    """n-th SplitMix64 output for `seed`, computed in C."""
    return _prng.splitmix64(seed, n)


def hip_status():
    """hipError_t codes of empty launches through the shared HIP library (0, 0 expected)."""
    return _linalg.hip_empty_launch(), _prng.hip_empty_sort()


__all__ = ["saxpy", "splitmix64", "hip_status", "__version__"]

"""A PJRT-shaped plugin package (rules_rocm example, shaped like jax-rocm7-pjrt).

JAX discovers it through the `jax_plugins` entry-point group, as it does the
real plugin, but xla_rocm_plugin.so implements only this example's function
table, not PJRT's: initialize() therefore registers no backend, so that JAX
in the same environment as the real jax-rocm7-pjrt never calls into it.
"""

import ctypes
import os

from .version import __version__  # noqa: F401

_PLUGIN = "xla_rocm_plugin.so"


def _get_library_path():
    path = os.path.join(os.path.dirname(__file__), _PLUGIN)
    return path if os.path.exists(path) else None


def gfx_targets():
    """gfx targets this plugin was built for (the --//:gfx expansion)."""

    class _Api(ctypes.Structure):
        _fields_ = [
            ("struct_size", ctypes.c_size_t),
            ("extension_start", ctypes.c_void_p),
            ("version_struct_size", ctypes.c_size_t),
            ("version_extension_start", ctypes.c_void_p),
            ("major_version", ctypes.c_int),
            ("minor_version", ctypes.c_int),
            ("gfx_targets", ctypes.CFUNCTYPE(ctypes.c_char_p)),
        ]

    lib = ctypes.CDLL(_get_library_path())
    lib.GetPjrtApi.restype = ctypes.POINTER(_Api)
    return lib.GetPjrtApi().contents.gfx_targets().decode().split(",")


def initialize():
    """Called by JAX's plugin discovery: checks the library is there."""
    path = _get_library_path()
    if path is None:
        raise RuntimeError("{} is missing from {}".format(_PLUGIN, os.path.dirname(__file__)))

"""A pure-Python JAX plugin shaped like jax_plugins.xla_rocm7.

JAX discovers plugins through the `jax_plugins` entry-point group and calls
`initialize()`; this one only records that it was called.
"""

from jax_plugins.hello_rocm.version import __version__

_initialized = False


def initialize():
    global _initialized
    _initialized = True
    return "hello_rocm " + __version__

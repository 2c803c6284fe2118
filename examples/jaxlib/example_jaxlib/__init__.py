"""A jaxlib-shaped package: pure-Python modules over per-version extensions."""

from example_jaxlib import numeric
from example_jaxlib.version import __version__

__all__ = ["numeric", "__version__"]

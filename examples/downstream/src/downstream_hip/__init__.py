"""Loads the HIP library shipped in this wheel."""

import ctypes
import os

LIBRARY = os.path.join(os.path.dirname(__file__), "libdownstream_saxpy.so")


def load():
    return ctypes.CDLL(LIBRARY)

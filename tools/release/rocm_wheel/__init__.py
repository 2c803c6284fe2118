"""rocm-wheel: wheel, ELF and offload-bundle tools for ROCm wheels.

The tool is a native binary installed as the `rocm-wheel` script; this
package only finds it (`python -m rocm_wheel ...`).
"""

import os
import sys
import sysconfig

__all__ = ["find_binary"]


def find_binary():
    """The path of the installed `rocm-wheel` binary, or FileNotFoundError."""
    name = "rocm-wheel" + (".exe" if os.name == "nt" else "")
    places = [sysconfig.get_path("scripts")]
    # pip install --user
    user_scheme = sysconfig.get_preferred_scheme("user") if hasattr(sysconfig, "get_preferred_scheme") else "posix_user"
    places.append(sysconfig.get_path("scripts", user_scheme))
    # pip install --target DIR: DIR/bin next to DIR/rocm_wheel
    places.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bin"))
    # the interpreter's own directory (venvs on some platforms)
    places.append(os.path.dirname(sys.executable))
    for place in places:
        path = os.path.join(place, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError("rocm-wheel binary not found in " + ", ".join(places) + ": reinstall the rocm-wheel wheel")

"""Install-test check: the plugin's eight modules import and export
PyInit_<module> only; the seven kernel modules register kernels.

On a free-threaded Python the GIL must stay disabled after every import:
each module declares that it does not need it (nanobind's free-threaded
mode), or CPython would turn the GIL back on for the whole process.

argv[1] is the Python minor version ("3.14t": free-threaded), argv[2] the
expected version. No GPU is
needed: the modules link ROCm's libraries but only list their FFI handlers.
Exports are read with binutils' nm (-D: the dynamic symbol table).
"""

import importlib
import subprocess
import sys

KERNEL_MODULES = ["_hybrid", "_linalg", "_prng", "_rnn", "_solver", "_sparse", "_triton"]
# Registers the kernel modules' targets with the PJRT plugin (jax_test.sh).
MODULES = KERNEL_MODULES + ["rocm_plugin_extension"]


def dynamic_exports(path):
    """The defined symbols of a shared object's dynamic symbol table (binutils' nm -D)."""
    nm = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True, check=True)
    return sorted(line.split()[-1] for line in nm.stdout.splitlines() if line.strip())


def main():
    python, want_version = sys.argv[1], sys.argv[2]
    freethreaded = "t" in sys.abiflags
    got = "{}.{}{}".format(*sys.version_info[:2], "t" if freethreaded else "")
    assert got == python, f"running Python {got}, expected {python}"
    version = importlib.import_module("jax_rocm7_plugin.version")
    assert version.__version__ == want_version, f"__version__ {version.__version__!r}, expected {want_version!r}"
    for name in MODULES:
        module = importlib.import_module("jax_rocm7_plugin." + name)
        suffix = module.__file__.rsplit("/", 1)[-1]
        assert suffix.startswith(name + ".cpython-" + python.replace(".", "")), f"{name} is {suffix}"
        if name in KERNEL_MODULES:
            assert module.registrations(), f"{name}.registrations() is empty"
        else:
            assert module.ffi_handlers(), f"{name}.ffi_handlers() is empty"
        exported = dynamic_exports(module.__file__)
        assert exported == ["PyInit_" + name], f"{name} exports {len(exported)} symbols, want only PyInit_{name}: {exported[:10]}"
        if freethreaded:
            assert not sys._is_gil_enabled(), f"importing {name} turned the GIL back on: it does not declare Py_MOD_GIL_NOT_USED"
        print(f"ok {name}: {suffix}")


if __name__ == "__main__":
    main()

"""The plugin inside JAX 0.10.2, with PyPI's PJRT plugin (no GPU needed).

Runs in a venv where the jax-rocm7-plugin wheel under test was
pip-installed with jax==0.10.2 (pip took jaxlib and jax-rocm7-pjrt from
PyPI). Modes:

  queued PACKAGE_DIR   import jax on the CPU and print, as JSON, the custom
                       call targets (name, API version) and custom types
                       JAX queued for ROCM and the nanobind internals
                       records once rocm_plugin_extension is imported too;
                       fails unless every module jaxlib's plugin_support
                       loaded came from PACKAGE_DIR
  register             the rest, in one process:
    - the modules jaxlib loads (gpu_prng, ...: _prng, _linalg, _solver,
      _sparse, _rnn, _triton) are this wheel's (its file names carry the
      version's EXT_SUFFIX; PyPI's do not);
    - rocm_plugin_extension shares the nanobind internals record of _jax
      (domain jax: no __nb_internals_* key of its own in the
      interpreter's dict), so it sees the types _jax registers;
    - PyPI's PJRT plugin (the real XLA), loaded through its C API, accepts
      every target and type JAX queued, through this wheel's
      rocm_plugin_extension exactly as jax_plugins/rocm/__init__.py
      registers them, then ffi_types() and ffi_handlers(); a non-handler
      is refused (the path validates);
    - a CPU computation still works.
  gil MODULE...        free-threaded Pythons: import jax (jaxlib's cp314t
                       modules declare that they need no GIL) and then each
                       MODULE; fails naming the first one after whose
                       import the GIL is enabled again
  threads              free-threaded Pythons: eight threads call into every
                       plugin module at once (registrations(),
                       ffi_handlers(), ffi_types()), a few hundred times
                       each, and get the same answers a single thread does;
                       the GIL stays disabled
"""

import ctypes
import functools
import json
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

PACKAGE = "jax_rocm7_plugin"
# The plugin modules jaxlib loads through plugin_support: module ->
# (jaxlib's module, the attribute it keeps the ROCm one in; jaxlib/gpu_*.py).
JAXLIB_MODULES = {
    "_hybrid": ("gpu_solver", "_hiphybrid"),
    "_linalg": ("gpu_linalg", "_hip_linalg"),
    "_prng": ("gpu_prng", "_hip_prng"),
    "_rnn": ("gpu_rnn", "_hip_rnn"),
    "_solver": ("gpu_solver", "_hipsolver"),
    "_sparse": ("gpu_sparse", "_hipsparse"),
    "_triton": ("gpu_triton", "_hip_triton"),
}


def loaded_modules():
    import importlib

    import jax._src.lib  # noqa: F401 (imports jaxlib.gpu_*)

    out = {}
    for module, (jaxlib_module, attr) in JAXLIB_MODULES.items():
        mod = getattr(importlib.import_module("jaxlib." + jaxlib_module), attr)
        assert mod is not None, f"jaxlib.{jaxlib_module} loaded no ROCm {module}"
        out[module] = mod.__file__
    return out


def queued():
    from jaxlib import xla_client

    import jax

    assert jax.__version__ == "0.10.2", jax.__version__
    import importlib

    import jaxlib._jax  # noqa: F401

    files = loaded_modules()
    calls = sorted([name, api_version] for name, _fn, api_version, _traits in xla_client._custom_callback.get("ROCM", []))
    types = sorted(name for name, platform in _queued_types(xla_client) if platform == "ROCM")
    importlib.import_module(PACKAGE + ".rocm_plugin_extension")
    return {"calls": calls, "types": types, "files": files, "nanobind_internals": nanobind_internals()}


def _queued_types(xla_client):
    # register_custom_type(name, value, platform) queues (name, value) per platform.
    queue = getattr(xla_client, "_custom_type_id", {})
    return [(name, platform) for platform, entries in queue.items() for name, _ in entries]


def nanobind_internals():
    """The keys of nanobind's internals records in the interpreter's dict."""
    get = ctypes.pythonapi.PyInterpreterState_Get
    get.restype = ctypes.c_void_p
    get_dict = ctypes.pythonapi.PyInterpreterState_GetDict
    # A borrowed reference: as a pointer, then a new reference by cast
    # (restype py_object would take it for a new one and steal it).
    get_dict.restype = ctypes.c_void_p
    get_dict.argtypes = [ctypes.c_void_p]
    interp_dict = ctypes.cast(get_dict(get()), ctypes.py_object).value
    return sorted(k for k in interp_dict if isinstance(k, str) and k.startswith("__nb_internals_"))


def register(pjrt_library):
    import importlib

    from jaxlib import xla_client

    import jax
    import jax.numpy as jnp

    files = loaded_modules()
    for module, path in files.items():
        name = os.path.basename(path)
        assert os.path.dirname(path).endswith(PACKAGE), f"{module} loaded from {path}"
        assert name.startswith(module + ".cpython-"), f"{module} is {name}: not this wheel's"
        print(f"ok jaxlib loads {module}: {name}")

    import jaxlib._jax  # noqa: F401

    before = nanobind_internals()
    ext = importlib.import_module(PACKAGE + ".rocm_plugin_extension")
    after = nanobind_internals()
    jax_domain = [k for k in before if k.endswith("_jax__")]
    assert jax_domain, f"_jax registered no nanobind internals record of domain jax: {before}"
    assert after == before, f"rocm_plugin_extension made a nanobind internals record of its own: {sorted(set(after) - set(before))}"
    print(f"ok rocm_plugin_extension shares _jax's nanobind internals record {jax_domain[0]}")

    pending = [(n, v) for n, _f, v, _t in xla_client._custom_callback.get("ROCM", [])]
    pending_types = [n for n, p in _queued_types(xla_client) if p == "ROCM"]
    assert pending, "JAX queued no custom call targets for ROCM"

    c_api = xla_client.load_pjrt_plugin_dynamically("rocm", pjrt_library)
    print(f"ok PyPI's PJRT plugin loaded through its C API: {pjrt_library}")
    # As jax_plugins/rocm/__init__.py does, after the GPU count it cannot
    # pass here: the queued types and targets go to the plugin now.
    xla_client.register_custom_type_handler("ROCM", functools.partial(ext.register_custom_type, c_api))
    xla_client.register_custom_call_handler("ROCM", functools.partial(ext.register_custom_call_target, c_api))
    assert "ROCM" not in xla_client._custom_callback, "queued targets were not handed to the plugin"
    print(f"ok the plugin accepted {len(pending)} queued targets and {len(pending_types)} types")
    types, handlers = ext.ffi_types(), ext.ffi_handlers()
    for name, value in types.items():
        xla_client.register_custom_type(name, value, platform="ROCM")
    for name, value in handlers.items():
        xla_client.register_custom_call_target(name, value, platform="ROCM", api_version=1)
    print(f"ok the plugin accepted ffi_types() {sorted(types)} and ffi_handlers() {sorted(handlers)}")

    # The control: something that is not a handler is refused by the plugin.
    try:
        ext.register_custom_call_target(c_api, "rules_rocm_not_a_handler", "not a capsule", "ROCM", 1, 0)
    except Exception as e:  # noqa: BLE001 (XlaRuntimeError or TypeError)
        print(f"ok a non-handler is refused: {type(e).__name__}: {str(e).splitlines()[0][:120]}")
    else:
        raise AssertionError("register_custom_call_target accepted a non-handler")

    x = jnp.arange(6.0).reshape(2, 3)
    total = float(jax.jit(lambda a: (a @ a.T).sum())(x))
    assert total == 83.0, total
    assert jax.devices()[0].platform == "cpu", jax.devices()
    print(f"ok jax {jax.__version__} computes on {jax.devices()[0]}: {total}")
    if "t" in sys.abiflags:
        assert not sys._is_gil_enabled(), "the GIL was enabled again on the way"
        print("ok the GIL is still disabled")


def _require_freethreaded():
    assert "t" in sys.abiflags, f"Python {sys.version} is not a free-threaded build"
    assert not sys._is_gil_enabled(), "the GIL is enabled before any import (PYTHON_GIL=1 or -X gil=1?)"


def gil(modules):
    import importlib

    _require_freethreaded()
    import jax  # noqa: F401

    # jaxlib imports the plugin's kernel modules itself (plugin_support).
    assert not sys._is_gil_enabled(), "importing jax (PyPI's jaxlib and the plugin modules it loads) turned the GIL back on"
    for name in modules:
        importlib.import_module(name)
        assert not sys._is_gil_enabled(), f"importing {name} turned the GIL back on: it does not declare Py_MOD_GIL_NOT_USED"
        print(f"ok the GIL stays disabled after importing {name}")


KERNEL_MODULES = sorted(JAXLIB_MODULES)


def threads(rounds=300, workers=8):
    import importlib
    import threading

    _require_freethreaded()
    modules = {name: importlib.import_module(f"{PACKAGE}.{name}") for name in KERNEL_MODULES}
    ext = importlib.import_module(PACKAGE + ".rocm_plugin_extension")

    # The registrations' names: handlers are capsules (new objects per call).
    def answers():
        out = {name: sorted(m.registrations()) for name, m in modules.items()}
        out["rocm_plugin_extension"] = (sorted(ext.ffi_handlers()), sorted(ext.ffi_types()))
        return out

    want = answers()
    start = threading.Barrier(workers)
    errors = []

    def work():
        try:
            start.wait()
            for _ in range(rounds):
                got = answers()
                if got != want:
                    errors.append(f"a thread got other registrations: {got} vs {want}")
                    return
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(repr(e))

    pool = [threading.Thread(target=work) for _ in range(workers)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert not errors, errors[:3]
    assert not sys._is_gil_enabled(), "the GIL was enabled while the threads ran"
    print(f"ok {workers} threads called into {len(want)} modules {rounds} times each at once, GIL disabled")


def main():
    mode = sys.argv[1]
    if mode == "queued":
        out = queued()
        for module, path in out.pop("files").items():
            assert os.path.dirname(path) == sys.argv[2], f"{module} loaded from {path}, not {sys.argv[2]}"
        print(json.dumps(out, sort_keys=True))
    elif mode == "register":
        register(sys.argv[2])
    elif mode == "gil":
        gil(sys.argv[2:])
    elif mode == "threads":
        threads()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()

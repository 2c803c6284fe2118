"""Runs inside a fresh venv with example-rocm7-pjrt installed (wheel_install_test).
argv: Python minor version, then the --//:gfx value, the expected targets
(comma list) and where the expectation comes from (//tests/outputs/gfx:gfx_expected)."""

import ctypes
import importlib
import importlib.metadata as md
import os
import re
import sys

eps = [ep for ep in md.entry_points(group="jax_plugins") if ep.name == "example_rocm7"]
assert len(eps) == 1, "jax_plugins entry point example_rocm7 missing: %r" % (eps,)
assert eps[0].value == "jax_plugins.example_rocm7", eps[0].value
mod = eps[0].load()
assert mod is importlib.import_module("jax_plugins.example_rocm7")

# jax_plugins is a namespace package, shared with other plugins.
import jax_plugins  # noqa: E402

assert getattr(jax_plugins, "__file__", None) is None, "jax_plugins must stay a namespace package"

plugin = os.path.join(os.path.dirname(mod.__file__), "xla_rocm_plugin.so")
assert os.path.isfile(plugin), plugin
lib = ctypes.CDLL(plugin)
lib.GetPjrtApi.restype = ctypes.POINTER(ctypes.c_size_t)
assert lib.GetPjrtApi().contents.value == 64, "PJRT_Api.struct_size"

# The targets the plugin was built for (baked in from $(ROCM_GFX_TARGETS)) are
# exactly the expected ones (//tests/outputs/gfx:gfx_expected: written out for the
# default --//:gfx).
assert len(sys.argv) == 5, "want: VERSION FLAG TARGETS SOURCE (the test's args), got %r" % sys.argv[1:]
flag, want, source = sys.argv[2], sys.argv[3].split(","), sys.argv[4]
assert want and all(re.fullmatch(r"gfx[0-9a-f]+", t) for t in want), want
targets = mod.gfx_targets()
assert targets == want, "--//:gfx=%s: plugin built for %r, want %r (%s)" % (
    flag,
    targets,
    want,
    source,
)
print("python", sys.argv[1], "plugin ok, --//:gfx=%s targets" % flag, ",".join(targets))

"""Runs inside a venv where hello-jax-plugin was pip-installed."""

import importlib.metadata as md
import sys

want = sys.argv[1]
got = "%d.%d%s" % (*sys.version_info[:2], "t" if "t" in sys.abiflags else "")  # 3.14t: free-threaded
assert got == want, f"venv runs Python {got}, expected {want}"

eps = [ep for ep in md.entry_points(group="jax_plugins") if ep.name == "hello_rocm"]
assert len(eps) == 1, f"jax_plugins entry point missing: {list(md.entry_points(group='jax_plugins'))}"
module = eps[0].load()
assert module.initialize() == "hello_rocm 0.1.0", module.initialize()

dist = md.distribution("hello-jax-plugin")
assert dist.version == "0.1.0", dist.version
meta = dist.metadata
assert meta["License-Expression"] == "Apache-2.0", meta["License-Expression"]
assert meta["Requires-Python"] == ">=3.10"
assert "site-packages" in module.__file__, module.__file__
print(f"ok: Python {got}: {eps[0].value} -> {module.initialize()}")

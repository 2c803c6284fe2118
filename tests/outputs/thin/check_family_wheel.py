"""One per-family wheel of //examples/pjrt:family_wheels: its distribution
name carries the family, every bundle holds exactly the family's targets
(`rocm-wheel inspect`), and pip installs it into a fresh venv where the
plugin loads.

argv: rocm-wheel, wheel, family, expected targets (comma list), expected
distribution name."""

import json
import os
import subprocess
import sys
import tempfile

rw, wheel, family, want, dist = sys.argv[1:6]
want = sorted(want.split(","))
report = json.loads(subprocess.run([rw, "inspect", "--json", wheel], check=True, capture_output=True, text=True).stdout)
assert report["wheel"]["name"] == dist, (report["wheel"]["name"], dist)
bundles = [b for e in report["elf_files"] for b in e["bundles"]]
assert bundles, "%s: no offload bundles" % wheel
for b in bundles:
    got = sorted(x["target"] for x in b["entries"] if x["target"])
    assert got == want, "%s: bundle at %#x holds %r, want %r (%s)" % (os.path.basename(wheel), b["offset"], got, want, family)

with tempfile.TemporaryDirectory() as tmp:
    venv = os.path.join(tmp, "venv")
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    py = os.path.join(venv, "bin", "python")
    subprocess.run([py, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", wheel], check=True)
    probe = (
        "import ctypes, importlib.metadata as md, os, jax_plugins.example_rocm7 as m\n"
        "assert md.distribution(%r).metadata['Name'] == %r\n"
        "lib = ctypes.CDLL(os.path.join(os.path.dirname(m.__file__), 'xla_rocm_plugin.so'))\n"
        "lib.GetPjrtApi.restype = ctypes.POINTER(ctypes.c_size_t)\n"
        "assert lib.GetPjrtApi().contents.value == 64\n"
    ) % (dist, dist)
    subprocess.run([py, "-c", probe], check=True)
print("ok: %s: %d bundles, each exactly %s; installs and loads as %s" % (os.path.basename(wheel), len(bundles), ",".join(want), dist))

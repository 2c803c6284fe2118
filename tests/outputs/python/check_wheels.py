"""Runs inside a fresh venv of one Python version where example-jaxlib and
example-rocm-plugin (and through it example-rocm7-pjrt) were pip-installed from the
wheels of one `bazel build //:wheels`. argv[1] is the expected minor version."""

import importlib.machinery
import importlib.metadata as md
import os
import platform
import random
import subprocess
import sys
import zlib

want = sys.argv[1]
# "3.14t": the free-threaded 3.14 (ABI flag t).
got = "%d.%d%s" % (*sys.version_info[:2], "t" if "t" in sys.abiflags else "")
assert got == want, f"venv runs Python {got}, expected {want}"
cp = "cp%d%d" % sys.version_info[:2]
abi = cp + ("t" if "t" in sys.abiflags else "")
suffix = importlib.machinery.EXTENSION_SUFFIXES[0]


def wheel_tags(dist):
    text = md.distribution(dist).read_text("WHEEL")
    return [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Tag:")]


def runpath(path):
    out = subprocess.run(["readelf", "-d", path], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        if "(RUNPATH)" in line or "(RPATH)" in line:
            return line.split("[", 1)[1].rstrip("]").split(":")
    return []


def check_extension(module):
    path = module.__file__
    assert "site-packages" in path, path
    assert path.endswith(suffix), f"{path} does not end with this interpreter's EXT_SUFFIX {suffix}"
    for entry in runpath(path):
        assert entry.startswith("$ORIGIN"), f"{path}: RUNPATH entry {entry!r} points outside the wheel"


# --- jaxlib-shaped wheel -----------------------------------------------------
import example_jaxlib  # noqa: E402
from example_jaxlib import _checksum, _core, numeric, version  # noqa: E402

assert wheel_tags("example-jaxlib") == [f"{cp}-{abi}-manylinux_2_28_x86_64"], wheel_tags("example-jaxlib")
for m in (_core, _checksum):
    check_extension(m)
# Compiled against this version's headers, not another one's.
assert numeric.compiled_for() == platform.python_version(), (numeric.compiled_for(), platform.python_version())

rng = random.Random(5)
a = [rng.uniform(-100, 100) for _ in range(257)]
b = [rng.uniform(-100, 100) for _ in range(257)]
expected = sum(x * y for x, y in zip(a, b))
assert abs(numeric.dot(a, b) - expected) <= 1e-9 * max(1.0, abs(expected)), (numeric.dot(a, b), expected)
try:
    numeric.dot([1.0], [1.0, 2.0])
    raise AssertionError("dot accepted sequences of different lengths")
except ValueError:
    pass
data = bytes(rng.randrange(256) for _ in range(100_000))
assert numeric.checksum(data) == zlib.adler32(data), (numeric.checksum(data), zlib.adler32(data))

assert example_jaxlib.__version__ == md.version("example-jaxlib") == version.__version__
if version.stamped:
    assert len(version.commit) == 40 and int(version.commit, 16) >= 0, version.commit
else:
    assert version.commit is None and version.commit_info == {}, (version.commit, version.commit_info)

# --- plugin-shaped wheel -----------------------------------------------------
import example_rocm_plugin  # noqa: E402
from example_rocm_plugin import _linalg, _prng  # noqa: E402

assert wheel_tags("example-rocm-plugin") == [f"{cp}-{abi}-manylinux_2_28_x86_64"], wheel_tags("example-rocm-plugin")
for m in (_linalg, _prng):
    check_extension(m)
    assert runpath(m.__file__) == ["$ORIGIN/lib"], runpath(m.__file__)

x = [rng.uniform(-10, 10) for _ in range(33)]
y = [rng.uniform(-10, 10) for _ in range(33)]
got_saxpy = example_rocm_plugin.saxpy(2.5, x, y)
assert got_saxpy == [2.5 * xi + yi for xi, yi in zip(x, y)], got_saxpy
# Empty launches through the shared HIP library succeed without a GPU.
assert example_rocm_plugin.hip_status() == (0, 0), example_rocm_plugin.hip_status()


def splitmix64(seed, n):
    mask = (1 << 64) - 1
    state = seed
    for _ in range(n + 1):
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z ^= z >> 31
    return z


for seed, n in ((0, 0), (42, 7), (2**63 + 5, 100)):
    assert example_rocm_plugin.splitmix64(seed, n) == splitmix64(seed, n), (seed, n)

# The shared HIP library was loaded from the installed wheel (RUNPATH), not
# from the build tree.
with open("/proc/self/maps") as f:
    maps = {line.split()[-1] for line in f if "libxla_rocm7_kernels" in line}
plugin_dir = os.path.dirname(example_rocm_plugin.__file__)
assert maps == {os.path.join(plugin_dir, "lib", "libxla_rocm7_kernels.so")}, maps
# Its pjrt-layout RUNPATH was replaced by where this wheel's users have ROCm's
# HIP runtime (TheRock's pip SDK two levels up, /opt/rocm).
assert runpath(os.path.join(plugin_dir, "lib", "libxla_rocm7_kernels.so")) == [
    "$ORIGIN/../../_rocm_sdk_core/lib",
    "/opt/rocm/lib",
], runpath(
    os.path.join(plugin_dir, "lib", "libxla_rocm7_kernels.so")
)

plugin_meta = md.distribution("example-rocm-plugin").metadata
# Its shared library needs the HIP runtime: rocm-sdk-core under the `rocm`
# extra, compatible with the toolkit's ROCm (7.2 here).
assert plugin_meta.get_all("Requires-Dist") == [
    f"example-rocm7-pjrt=={plugin_meta['Version']}",
    'rocm-sdk-core~=7.2.0; extra == "rocm"',
], plugin_meta.get_all("Requires-Dist")
assert plugin_meta.get_all("Provides-Extra") == ["rocm"], plugin_meta.get_all("Provides-Extra")
assert md.version("example-rocm7-pjrt") == plugin_meta["Version"], md.version("example-rocm7-pjrt")
assert example_rocm_plugin.__version__ == plugin_meta["Version"]

print(f"ok: Python {platform.python_version()}: {_core.__file__.rsplit('/', 1)[-1]}, dot={numeric.dot(a, b):.3f}")

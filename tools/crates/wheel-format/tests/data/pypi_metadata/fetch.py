"""Refreshes this directory: the METADATA of one wheel (the first PyPI
lists) of each distribution below, at the version given,
for the differential test of tests/packaging_metadata.rs, read from the
wheel's zip directory by HTTP range requests (a mirror need not serve PEP
658 files). The files are committed so the corpus is the same on a machine
that never downloaded a wheel.

    python3 fetch.py
"""

import io
import json
import urllib.request
import zipfile
from pathlib import Path

# Real ROCm and JAX metadata (extras, markers, local versions, pins), and
# distributions with many or unusual Requires-Python and marker forms.
PINNED = {
    "jax": "0.10.2",
    "jaxlib": "0.10.2",
    "jax-rocm7-plugin": "0.10.2",
    "jax-rocm7-pjrt": "0.10.2",
    "rocm-bootstrap": "0.3.0",
    "variantlib": "0.2.2",
    "numpy": "2.5.5",
    "scipy": "1.18.1",
    "ml-dtypes": "0.7.0",
    "torch": "2.15.0",
    "triton": "3.9.0",
    "transformers": "5.25.0",
    "requests": "2.34.2",
    "urllib3": "2.8.0",
    "importlib-metadata": "10.2.0",
    "typing-extensions": "4.16.0",
}


def get(url, accept=None):
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(req, timeout=60) as r:
        return r.read()


class Remote(io.RawIOBase):
    """A seekable read-only file over HTTP range requests."""

    def __init__(self, url, size):
        self.url, self.size, self.pos = url, size, 0

    def seekable(self):
        return True

    def readable(self):
        return True

    def tell(self):
        return self.pos

    def seek(self, off, whence=0):
        self.pos = {0: off, 1: self.pos + off, 2: self.size + off}[whence]
        return self.pos

    def readinto(self, b):
        if self.pos >= self.size or not len(b):
            return 0
        end = min(self.pos + len(b), self.size) - 1
        req = urllib.request.Request(self.url, headers={"Range": "bytes=%d-%d" % (self.pos, end)})
        with urllib.request.urlopen(req, timeout=60) as r:
            data = r.read()
        b[: len(data)] = data
        self.pos += len(data)
        return len(data)


here = Path(__file__).parent
for name, version in PINNED.items():
    page = json.loads(get("https://pypi.org/simple/%s/" % name, "application/vnd.pypi.simple.v1+json"))
    wheels = [f for f in page["files"] if f["filename"].endswith(".whl")]
    wheel = next(f for f in wheels if f["filename"].split("-")[1] == version)
    z = zipfile.ZipFile(io.BufferedReader(Remote(wheel["url"], wheel["size"]), 1 << 16))
    (member,) = [n for n in z.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
    text = z.read(member)
    (here / ("%s-%s.METADATA" % (name, version))).write_bytes(text)
    print(name, version, len(text))

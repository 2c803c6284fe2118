#!/usr/bin/env python3
"""Lists the gfx targets of every offload bundle in the .hip_fatbin sections
of a shared library or of every .so inside a wheel.

An oracle independent of the code under test: sections are read with
binutils' objcopy, bundles parsed here from the documented formats
(uncompressed __CLANG_OFFLOAD_BUNDLE__, compressed CCOB v2/v3 with zstd or
zlib).

Usage: bundle_targets.py PATH [--per-bundle]
Prints the sorted union of targets, one per line (or one line per bundle).
"""

import os
import struct
import subprocess
import sys
import tempfile
import zipfile
import zlib

MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
CCOB = b"CCOB"
PREFIX = "hipv4-amdgcn-amd-amdhsa--"
ALIGN = 4096


def _parse_plain(data, off):
    """({entry id: bytes}, end offset) of the uncompressed bundle at `off`."""
    count = struct.unpack_from("<Q", data, off + 24)[0]
    pos = off + 32
    entries = {}
    end = off + 32
    for _ in range(count):
        e_off, e_size, id_len = struct.unpack_from("<QQQ", data, pos)
        pos += 24
        entries[data[pos:pos + id_len].decode()] = data[off + e_off:off + e_off + e_size]
        pos += id_len
        end = max(end, off + e_off + e_size)
    return entries, max(end, pos)


def _zstd_decompress(payload):
    try:
        from compression import zstd  # Python >= 3.14

        return zstd.decompress(payload)
    except ImportError:
        pass
    try:
        import zstandard  # the repo's .venv has it

        return zstandard.ZstdDecompressor().decompressobj().decompress(payload)
    except ImportError:
        # Any other interpreter (an install test's venv): the zstd program.
        return subprocess.run(["zstd", "-dc"], input=payload, capture_output=True, check=True).stdout


def _parse_compressed(data, off):
    version, method = struct.unpack_from("<HH", data, off + 4)
    if version == 2:
        total, _raw, _hash = struct.unpack_from("<IIQ", data, off + 8)
        header = 24
    elif version == 3:
        total, _raw, _hash = struct.unpack_from("<QQQ", data, off + 8)
        header = 32
    else:
        raise SystemExit("unsupported CCOB version {} at offset {}".format(version, off))
    payload = data[off + header:off + total]
    if method == 1:
        raw = _zstd_decompress(payload)
    elif method == 0:
        raw = zlib.decompress(payload)
    else:
        raise SystemExit("unknown CCOB compression method {}".format(method))
    if not raw.startswith(MAGIC):
        raise SystemExit("CCOB at offset {} does not decompress to an offload bundle".format(off))
    entries, _ = _parse_plain(raw, 0)
    return entries, off + total


def code_objects_in_section(data):
    """One {gfx target: code object bytes} per bundle of a .hip_fatbin section."""
    off = 0
    out = []
    while off < len(data):
        if data.startswith(MAGIC, off):
            entries, end = _parse_plain(data, off)
        elif data.startswith(CCOB, off):
            entries, end = _parse_compressed(data, off)
        elif not data[off:].strip(b"\0"):
            break
        else:
            raise SystemExit("no offload bundle at offset {} of .hip_fatbin".format(off))
        out.append({i[len(PREFIX):]: b for i, b in entries.items() if i.startswith(PREFIX)})
        off = (end + ALIGN - 1) // ALIGN * ALIGN
    return out


def bundles_in_section(data):
    return [sorted(b) for b in code_objects_in_section(data)]


def hip_fatbin(so_path, tmp):
    out = os.path.join(tmp, "fatbin")
    if os.path.exists(out):
        os.remove(out)
    r = subprocess.run(["objcopy", "--dump-section", ".hip_fatbin=" + out, so_path, os.path.join(tmp, "o")],
                       capture_output=True, text=True)
    if r.returncode != 0 or not os.path.exists(out):
        return b""
    with open(out, "rb") as f:
        return f.read()


def main():
    path = sys.argv[1]
    per_bundle = "--per-bundle" in sys.argv[2:]
    with tempfile.TemporaryDirectory() as tmp:
        libs = []
        if path.endswith(".whl"):
            with zipfile.ZipFile(path) as z:
                for n in z.namelist():
                    if n.endswith(".so") or ".so." in n:
                        dest = os.path.join(tmp, "lib%d.so" % len(libs))
                        with open(dest, "wb") as f:
                            f.write(z.read(n))
                        libs.append(dest)
        else:
            libs.append(path)
        bundles = []
        for lib in libs:
            bundles += bundles_in_section(hip_fatbin(lib, tmp))
    if per_bundle:
        for b in bundles:
            print(",".join(b))
    else:
        for t in sorted({t for b in bundles for t in b}):
            print(t)


if __name__ == "__main__":
    main()

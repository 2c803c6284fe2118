"""Independent reader/writer of compressed offload bundles for the tests.

Written from the format description (LLVM's CompressedOffloadBundle), not
from the Rust code, so the two cross-check each other.

    ccob.py read FILE          -> JSON: header fields + inner bundle entries
    ccob.py write IN OUT METHOD VERSION
                               -> wraps the uncompressed bundle IN into OUT
    ccob.py section FILE       -> JSON list, one item per bundle of a
                                  .hip_fatbin dump (bundles back to back,
                                  zero padding between them)
"""

import hashlib
import json
import struct
import sys
import zlib

import zstandard

BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"


def parse_inner(data):
    assert data[:24] == BUNDLE_MAGIC, "inner bundle magic"
    (count,) = struct.unpack_from("<Q", data, 24)
    pos = 32
    entries = []
    for _ in range(count):
        off, size, idlen = struct.unpack_from("<QQQ", data, pos)
        pos += 24
        ident = data[pos : pos + idlen].decode()
        pos += idlen
        assert off + size <= len(data), "entry out of range"
        body = data[off : off + size]
        entries.append(
            {
                "id": ident,
                "offset": off,
                "size": size,
                "sha256": hashlib.sha256(body).hexdigest(),
            }
        )
    return entries


def read(path):
    return read_blob(open(path, "rb").read())


def read_blob(blob):
    assert blob[:4] == b"CCOB", "CCOB magic"
    version, method = struct.unpack_from("<HH", blob, 4)
    if version == 2:
        total, usize, h = struct.unpack_from("<IIQ", blob, 8)
        hdr = 24
    elif version == 3:
        total, usize, h = struct.unpack_from("<QQQ", blob, 8)
        hdr = 32
    else:
        raise SystemExit(f"unexpected version {version}")
    stream = blob[hdr:total]
    if method == 1:
        inner = zstandard.ZstdDecompressor().decompress(stream, max_output_size=usize)
    elif method == 0:
        inner = zlib.decompress(stream)
    else:
        raise SystemExit(f"unexpected method {method}")
    md5_low = struct.unpack("<Q", hashlib.md5(inner).digest()[:8])[0]
    return {
        "version": version,
        "method": {0: "zlib", 1: "zstd"}[method],
        "total_size": total,
        "file_size": len(blob),
        "uncompressed_size": usize,
        "decompressed_size": len(inner),
        "hash_ok": md5_low == h,
        "entries": parse_inner(inner),
    }


def section(path):
    data = open(path, "rb").read()
    pos, out = 0, []
    while True:
        while pos < len(data) and data[pos] == 0:
            pos += 1
        if pos >= len(data):
            return out
        if data[pos : pos + 4] == b"CCOB":
            version = struct.unpack_from("<H", data, pos + 4)[0]
            fmt = "<I" if version == 2 else "<Q"
            (total,) = struct.unpack_from(fmt, data, pos + 8)
            item = read_blob(data[pos : pos + total])
            pos += total
        else:
            entries = parse_inner(data[pos:])
            end = max(e["offset"] + e["size"] for e in entries)
            item = {"method": "none", "entries": entries}
            pos += end
        out.append(item)


def write(src, dst, method, version):
    inner = open(src, "rb").read()
    if method == "zstd":
        stream, m = zstandard.ZstdCompressor(level=5).compress(inner), 1
    else:
        stream, m = zlib.compress(inner, 9), 0
    h = struct.unpack("<Q", hashlib.md5(inner).digest()[:8])[0]
    if version == 2:
        head = b"CCOB" + struct.pack("<HHIIQ", 2, m, 24 + len(stream), len(inner), h)
    else:
        head = b"CCOB" + struct.pack("<HHQQQ", 3, m, 32 + len(stream), len(inner), h)
    open(dst, "wb").write(head + stream)


if __name__ == "__main__":
    if sys.argv[1] == "read":
        print(json.dumps(read(sys.argv[2])))
    elif sys.argv[1] == "section":
        print(json.dumps(section(sys.argv[2])))
    else:
        write(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))

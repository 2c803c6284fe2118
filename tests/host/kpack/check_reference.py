"""The kpack wheels of a build, judged by rocm-kpack's own code (its C++
loader through ctypes, its Python bundle parser), where pip installed them.

argv: the reference runtime (librocm_kpack.so), site-packages holding the
host wheel and the device wheel of TARGET, the package directory, the fat
wheel of the same build, TARGET, a target whose device wheel is not
installed, and optionally a tree where the reference's own splitter
(ArtifactSplitter: kpack_offload_binary on each fat binary, its archives)
put the same package.

For every binary of the package with HIPK wrappers, each wrapper's marker
(read where the wrapper's relocated pointer leads) is handed to
kpack_load_code_object with the binary's installed path: the loader resolves
the search paths to the device wheel's archive and returns a code object
that must be byte-equal to the TARGET code object of the same translation
unit in the fat wheel's binary (the reference's parse_fatbin_data). For the
absent target the loader must fail (archive not found). Every archive in
site-packages is read whole through kpack_open / kpack_get_kernel.
"""

import ctypes
import os
import struct
import sys
import zipfile

from rocm_kpack.ccob_parser import CCOBHeader, parse_fatbin_data

runtime, site, package, fat_wheel, target, absent = sys.argv[1:7]
kp = ctypes.CDLL(runtime)
c_void_pp = ctypes.POINTER(ctypes.c_void_p)
kp.kpack_load_code_object.argtypes = [
    ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint32,
    ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t, c_void_pp, ctypes.POINTER(ctypes.c_size_t),
]
kp.kpack_cache_create.argtypes = [c_void_pp]
kp.kpack_open.argtypes = [ctypes.c_char_p, c_void_pp]
kp.kpack_get_binary.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_char_p)]
kp.kpack_get_binary_count.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
kp.kpack_get_architecture.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_char_p)]
kp.kpack_get_architecture_count.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
kp.kpack_get_kernel.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, c_void_pp, ctypes.POINTER(ctypes.c_size_t)]
kp.kpack_free_kernel.argtypes = [ctypes.c_void_p]
kp.kpack_free_code_object.argtypes = [ctypes.c_void_p]
kp.kpack_close.argtypes = [ctypes.c_void_p]
ARCHIVE_NOT_FOUND = 13
reference_tree = sys.argv[7] if len(sys.argv) > 7 else None


def sections(data):
    """name -> (addr, offset, size, type) of a little-endian ELF64 file."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = heads[shstrndx][4]
    out = {}
    for name, typ, _flags, addr, off, size, *_ in heads:
        end = data.index(b"\0", strtab + name)
        out[data[strtab + name:end].decode()] = (addr, off, size, typ)
    return out


def relative_addends(data, secs):
    """r_offset -> addend of the R_X86_64_RELATIVE relocations."""
    addr, off, size, _ = secs[".rela.dyn"]
    out = {}
    for i in range(0, size, 24):
        r_offset, r_info, addend = struct.unpack_from("<QQq", data, off + i)
        if r_info & 0xFFFFFFFF == 8:
            out[r_offset] = addend
    return out


def wrappers(path):
    """[(co_index, marker bytes)] of a binary's HIPK wrappers, in order."""
    data = open(path, "rb").read()
    secs = sections(data)
    if ".hipFatBinSegment" not in secs:
        return []
    seg_addr, seg_off, seg_size, _ = secs[".hipFatBinSegment"]
    ref_addr, ref_off, ref_size, _ = secs[".rocm_kpack_ref"]
    rel = relative_addends(data, secs)
    out = []
    for i in range(0, seg_size, 24):
        magic, version = struct.unpack_from("<II", data, seg_off + i)
        assert magic == 0x4B504948, "%s: wrapper %d has magic %#x, not HIPK" % (path, i // 24, magic)
        co_index, = struct.unpack_from("<I", data, seg_off + i + 16)
        ptr = rel[seg_addr + i + 8]
        assert ref_addr <= ptr < ref_addr + ref_size, "%s: wrapper %d points outside .rocm_kpack_ref" % (path, i // 24)
        out.append((co_index, data[ref_off + ptr - ref_addr:ref_off + ref_size]))
    return out


def fat_code_objects(member):
    """TARGET's code object of each translation unit, from the fat wheel's copy of `member`.

    Bundles start 4096-aligned in .hip_fatbin, zero-padded in between; each
    is read by the reference (a compressed one up to its header's total size).
    """
    data = zipfile.ZipFile(fat_wheel).read(member)
    _addr, off, size, _ = sections(data)[".hip_fatbin"]
    section = data[off:off + size]
    starts = [i for i in range(0, size, 4096) if section[i:i + 4] == b"CCOB" or section[i:i + 24] == b"__CLANG_OFFLOAD_BUNDLE__"]
    out = []
    for n, start in enumerate(starts):
        chunk = section[start:starts[n + 1] if n + 1 < len(starts) else size]
        if chunk[:4] == b"CCOB":
            chunk = chunk[:CCOBHeader.parse(chunk).total_size]
        found = [b.data[e.offset:e.offset + e.size] for b in parse_fatbin_data(chunk) for e in b.entries if e.triple.endswith("--" + target)]
        assert len(found) == 1, "%s: %d %s code objects in bundle %d" % (member, len(found), target, n)
        out.append(found[0])
    return out


def load(marker, binary, co_index, arch):
    cache = ctypes.c_void_p()
    assert kp.kpack_cache_create(ctypes.byref(cache)) == 0
    archs = (ctypes.c_char_p * 1)(arch.encode())
    ptr, size = ctypes.c_void_p(), ctypes.c_size_t()
    err = kp.kpack_load_code_object(cache, marker, binary.encode(), co_index, archs, 1, ctypes.byref(ptr), ctypes.byref(size))
    data = ctypes.string_at(ptr, size.value) if err == 0 else None
    kp.kpack_free_code_object(ptr)
    kp.kpack_cache_destroy(cache)
    return err, data


checked = 0
pkg_dir = os.path.join(site, package)
for root, _dirs, files in os.walk(pkg_dir):
    for name in sorted(files):
        path = os.path.join(root, name)
        if not (name.endswith(".so") or ".so." in name):
            continue
        found = wrappers(path)
        if not found:
            continue
        member = os.path.relpath(path, site)
        fat = fat_code_objects(member)
        assert len(fat) == len(found), "%s: %d HIPK wrappers, the fat build's copy has %d bundles" % (member, len(found), len(fat))
        for i, (co_index, marker) in enumerate(found):
            err, code = load(marker, path, co_index, target)
            assert err == 0, "%s wrapper %d: kpack_load_code_object(%s) returned %d" % (member, i, target, err)
            assert code == fat[i], "%s wrapper %d: the loader's %s code object differs from the fat build's" % (member, i, target)
            if reference_tree:
                theirs = wrappers(os.path.join(reference_tree, member))
                assert len(theirs) == len(found), "%s: the reference transform made %d wrappers, the build %d" % (member, len(theirs), len(found))
                err, ref_code = load(theirs[i][1], os.path.join(reference_tree, member), theirs[i][0], target)
                assert err == 0 and ref_code == code, "%s wrapper %d: the loader answers differently for the reference transform's binary (error %d)" % (member, i, err)
            err, _ = load(marker, path, co_index, absent)
            assert err == ARCHIVE_NOT_FOUND, "%s wrapper %d: without %s's device wheel the loader returned %d, want %d" % (
                member, i, absent, err, ARCHIVE_NOT_FOUND)
            checked += 1
        print("ok: %s: %d wrappers resolve to %s code objects byte-equal to the fat build's%s; %s: archive not found" % (
            member, len(found), target, " and to the reference transform's" if reference_tree else "", absent))
assert checked, "no binary with HIPK wrappers under %s" % pkg_dir

archives = 0
for root, _dirs, files in os.walk(site):
    for name in files:
        if not name.endswith(".kpack"):
            continue
        ar = ctypes.c_void_p()
        path = os.path.join(root, name)
        assert kp.kpack_open(path.encode(), ctypes.byref(ar)) == 0, path
        n, m = ctypes.c_size_t(), ctypes.c_size_t()
        kp.kpack_get_binary_count(ar, ctypes.byref(n))
        kp.kpack_get_architecture_count(ar, ctypes.byref(m))
        kernels = 0
        for b in range(n.value):
            key = ctypes.c_char_p()
            kp.kpack_get_binary(ar, b, ctypes.byref(key))
            for a in range(m.value):
                arch = ctypes.c_char_p()
                kp.kpack_get_architecture(ar, a, ctypes.byref(arch))
                ptr, size = ctypes.c_void_p(), ctypes.c_size_t()
                err = kp.kpack_get_kernel(ar, key.value, arch.value, ctypes.byref(ptr), ctypes.byref(size))
                assert err == 0 and size.value > 0, "%s: %s for %s: error %d" % (path, key.value, arch.value, err)
                assert ctypes.string_at(ptr, 4) == b"\x7fELF", "%s: %s is not an ELF code object" % (path, key.value)
                kp.kpack_free_kernel(ptr)
                kernels += 1
        kp.kpack_close(ar)
        archives += 1
        print("ok: kpack_open/kpack_get_kernel read %s: %d kernels" % (os.path.relpath(path, site), kernels))
assert archives, "no .kpack archive in %s" % site
print("PASS: %d wrappers resolved by the reference loader, %d archives read" % (checked, archives))

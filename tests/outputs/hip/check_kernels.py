#!/usr/bin/env python3
"""Checks a HIP shared library's device code against the kernels its host code registers.

For every offload bundle in the library's .hip_fatbin and every gfx target
expected, the target's code object must define the kernel descriptor
`<kernel>.kd` of every kernel given, and the library itself must define the
kernel's handle `<kernel>` (what __hipRegisterFunction registers).
An oracle independent of rules_rocm's Rust tool: bundles are parsed by
tests/lib/bundle_targets.py, ELF symbol tables here.

Usage: check_kernels.py LIB.so --targets gfx1200,gfx1201 --bundles N KERNEL...
"""

import argparse
import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
import bundle_targets  # noqa: E402


def defined_symbols(elf):
    """Names of the defined symbols of a 64-bit little-endian ELF file (.symtab and .dynsym)."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        raise SystemExit("not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", elf, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    names = set()
    for _name, sh_type, _f, _a, off, size, link, _i, _al, entsize in sections:
        if sh_type not in (2, 11):  # SHT_SYMTAB, SHT_DYNSYM
            continue
        str_off, str_size = sections[link][4], sections[link][5]
        strtab = elf[str_off:str_off + str_size]
        for pos in range(off, off + size, entsize):
            st_name, _info, _other, shndx = struct.unpack_from("<IBBH", elf, pos)
            if shndx == 0 or st_name == 0:
                continue
            names.add(strtab[st_name:strtab.index(b"\0", st_name)].decode())
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--targets", required=True, help="comma-separated gfx targets every bundle must hold")
    ap.add_argument("--bundles", type=int, required=True, help="number of bundles (HIP sources) expected")
    ap.add_argument("kernels", nargs="+", help="mangled kernel names")
    a = ap.parse_args()
    targets = sorted(t for t in a.targets.split(",") if t)
    with open(a.lib, "rb") as f:
        host = defined_symbols(f.read())
    with tempfile.TemporaryDirectory() as tmp:
        bundles = bundle_targets.code_objects_in_section(bundle_targets.hip_fatbin(a.lib, tmp))
    errors = []
    if len(bundles) != a.bundles:
        errors.append("{} bundles in .hip_fatbin, want {}".format(len(bundles), a.bundles))
    for k in a.kernels:
        if k not in host:
            errors.append("the library does not define the kernel handle {} (not registered)".format(k))
    found = {}
    for i, bundle in enumerate(bundles):
        if sorted(bundle) != targets:
            errors.append("bundle {} holds {}, want {}".format(i, sorted(bundle), targets))
        for t, co in bundle.items():
            found.setdefault(t, set()).update(n[:-3] for n in defined_symbols(co) if n.endswith(".kd"))
    for t in targets:
        missing = [k for k in a.kernels if k not in found.get(t, set())]
        if missing:
            errors.append("no {} code object holds {}".format(t, ", ".join(k + ".kd" for k in missing)))
        else:
            print("{}: {} kernel(s) present".format(t, len(a.kernels)))
    if errors:
        sys.exit("FAIL: {}:\n  {}".format(a.lib, "\n  ".join(errors)))
    print("PASS")


if __name__ == "__main__":
    main()

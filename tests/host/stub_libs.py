"""Loadable stand-ins for shared libraries, made from their dynamic symbol tables.

    python3 stub_libs.py [--runpath R] OUT_DIR LIBRARY...
    python3 stub_libs.py --missing-of BINARY OUT_DIR

For each LIBRARY (a real ROCm library, e.g. the build root's
libamdhip64.so.7, which needs a newer glibc than the host has), and each
library it needs (DT_NEEDED) from its own directory that this host lacks,
writes OUT_DIR/<soname>: a shared library compiled here with the host's
gcc, with the same soname, the same defined dynamic symbols (functions as
empty bodies, data as zeroed arrays of their size), the same symbol
versions and the same DT_NEEDED among the stubs (found through RUNPATH R,
default $ORIGIN), so the dynamic linker binds a module built against the
real one exactly as it would there, symbols found through a library's own
dependencies included. `llvm-ifs --output-elf` stubs are link-only (no
loadable segment): these load. Fails naming the library it cannot read.

--missing-of BINARY: for libraries BINARY needs that this system does not
have at all (PyPI's PJRT plugin links ROCm profiler and SMI libraries no
Debian package carries), writes one stub per missing soname defining, as
empty functions, every undefined symbol of BINARY that none of its
present libraries defines (unversioned, as BINARY asks for them).
"""

import os
import re
import subprocess
import sys
import tempfile


def readelf(*args):
    return subprocess.run(["readelf", "-W", *args], check=True, capture_output=True, text=True).stdout


def soname(path):
    m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", readelf("-d", path))
    if not m:
        sys.exit(f"stub_libs: {path} has no DT_SONAME")
    return m.group(1)


def version_nodes(path):
    """Version definitions except the base one (the soname), in file order."""
    section = readelf("-V", path).split("Version definition section", 1)
    if len(section) < 2:
        return []
    section = section[1].split("Version needs section", 1)[0]
    names = re.findall(r"Flags: (\S+)\s+Index: \d+\s+Cnt: \d+\s+Name: (\S+)", section)
    return [name for flags, name in names if flags != "BASE"]


def dyn_syms(path):
    """The fields of each row of readelf's dynamic symbol table."""
    for line in readelf("--dyn-syms", path).splitlines():
        f = line.split()
        if len(f) >= 8 and f[0].rstrip(":").isdigit():
            yield f


def defined_symbols(path):
    """(name, version or None, default version?, type, size) of each defined global symbol."""
    out = []
    for f in dyn_syms(path):
        # ABS entries are the version nodes' own names, not symbols.
        if f[6] in ("UND", "ABS"):
            continue
        kind, bind = f[3], f[4]
        if bind not in ("GLOBAL", "WEAK") or kind not in ("FUNC", "OBJECT", "IFUNC", "TLS"):
            continue
        size = int(f[2], 0) if f[2].isdigit() or f[2].startswith("0x") else 0
        name, sep, version = f[7].partition("@")
        default = version.startswith("@")
        out.append((name, version.lstrip("@") or None, default or not sep, kind, size))
    return out


def c_source(symbols):
    lines = []
    for i, (name, version, default, kind, size) in enumerate(symbols):
        ident = f"rules_rocm_stub_{i}"
        if kind == "OBJECT":
            lines.append(f"char {ident}[{max(size, 1)}];")
        elif kind == "TLS":
            lines.append(f"__thread char {ident}[{max(size, 1)}];")
        else:
            lines.append(f"void {ident}(void) {{}}")
        if version:
            lines.append(f'__asm__(".symver {ident}, {name}{"@@" if default else "@"}{version}");')
        else:
            lines.append(f'__asm__(".globl {name}\\n.set {name}, {ident}");')
    return "\n".join(lines) + "\n"


def version_script(nodes):
    # The stubs' own names stay local; every versioned name is exported by
    # .symver. A library without versions exports everything else.
    if not nodes:
        return "{ local: rules_rocm_stub_*; };\n"
    body = [f"{nodes[0]} {{ local: rules_rocm_stub_*; }};"]
    body += [f"{n} {{ }};" for n in nodes[1:]]
    return "\n".join(body) + "\n"


def needed(path):
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", readelf("-d", path))


def host_libraries():
    """The sonames the host's loader cache lists (ldconfig -p), read once."""
    out = subprocess.run(["/sbin/ldconfig", "-p"], check=True, capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines()[1:] if line.strip()}


def closure(paths):
    """The libraries to stub, dependencies first: `paths` and what they need from their directories that the host lacks."""
    order, seen, host = [], set(), host_libraries()

    def visit(path):
        name = os.path.basename(path)
        if name in seen:
            return
        seen.add(name)
        for dep in needed(path):
            candidate = os.path.join(os.path.dirname(path), dep)
            if os.path.exists(candidate) and dep not in host:
                visit(candidate)
        order.append(path)

    for p in paths:
        visit(p)
    return order


def make_stub(path, out_dir, runpath):
    name = soname(path)
    symbols = defined_symbols(path)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "stub.c")
        script = os.path.join(tmp, "stub.map")
        with open(src, "w") as f:
            f.write(c_source(symbols))
        argv = ["gcc", "-shared", "-fPIC", "-o", None, src, f"-Wl,-soname,{name}", "-Wl,--enable-new-dtags", f"-Wl,-rpath,{runpath}"]
        # Its dependencies among the stubs already made (dependencies first),
        # each a DT_NEEDED though the stub calls none of them.
        argv += ["-Wl,--no-as-needed"] + [os.path.join(out_dir, d) for d in needed(path) if os.path.exists(os.path.join(out_dir, d))]
        text = version_script(version_nodes(path))
        if text:
            with open(script, "w") as f:
                f.write(text)
            argv.append(f"-Wl,--version-script,{script}")
        out = os.path.join(out_dir, name)
        argv[4] = out + ".tmp"
        subprocess.run(argv, check=True)
        os.replace(out + ".tmp", out)
    return name, len(symbols)


def undefined_symbols(path):
    return {f[7].partition("@")[0] for f in dyn_syms(path) if f[6] == "UND" and f[4] == "GLOBAL"}


def ldd(path):
    """soname -> path (None: not found) of every library the dynamic linker loads for `path`."""
    out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (not found|(\S+))", line)
        if m:
            found[m.group(1)] = m.group(3)
        # The dynamic linker itself: a path, no "=>".
        m = re.match(r"\s*(/\S+) \(0x", line)
        if m:
            found[os.path.basename(m.group(1))] = m.group(1)
    return found


def stub_missing(binary, out_dir):
    libs = ldd(binary)
    missing = sorted(name for name in needed(binary) if name in libs and libs[name] is None)
    defined = set()
    for where in libs.values():
        if where:
            defined.update(name for name, *_ in defined_symbols(where))
    symbols = sorted(undefined_symbols(binary) - defined)
    for name in missing:
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "stub.c")
            with open(src, "w") as f:
                f.write(c_source([(s, None, True, "FUNC", 0) for s in symbols]))
            out = os.path.join(out_dir, name)
            subprocess.run(["gcc", "-shared", "-fPIC", "-o", out + ".tmp", src, f"-Wl,-soname,{name}"], check=True)
            os.replace(out + ".tmp", out)
        print(f"stub_libs: {name}: {len(symbols)} symbols {binary} needs and nothing present defines")
    return missing


def main():
    args = sys.argv[1:]
    if args[:1] == ["--missing-of"] and len(args) == 3:
        os.makedirs(args[2], exist_ok=True)
        stub_missing(args[1], args[2])
        return
    runpath = "$ORIGIN"
    if args[:1] == ["--runpath"]:
        runpath, args = args[1], args[2:]
    if len(args) < 2:
        sys.exit(__doc__)
    out_dir = args[0]
    os.makedirs(out_dir, exist_ok=True)
    for path in closure(args[1:]):
        name, count = make_stub(path, out_dir, runpath)
        print(f"stub_libs: {name}: {count} symbols")


if __name__ == "__main__":
    main()

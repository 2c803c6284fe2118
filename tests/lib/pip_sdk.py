"""A stand-in TheRock pip SDK made from the build root's ROCm.

    pip_sdk.py OUT --version 7.13.0a20261201 [--targets gfx1200,gfx1201]

Writes TheRock's pip layout (docs/packaging/python_packaging.md) of the
ROCm in /usr (Debian's HIP on clang from /usr/lib/llvm-<N>) into OUT:

- rocm_sdk_core: `_rocm_sdk_core/lib/libamdhip64.so.<major>`, the real
  HIP runtime (its SONAME's file);
- rocm_sdk_libraries: the arch-neutral `_rocm_sdk_libraries/` package;
- rocm_sdk_devel: `rocm_sdk_devel/_devel.tar`, whose `_rocm_sdk_devel/`
  tree links the runtime from `../../_rocm_sdk_core/lib` (relative, as
  TheRock's does), holds rocm-core's version header at the SDK's release,
  HIP's version file, the root's ROCm headers and clang's device
  libraries (copies, at `include/` and `lib/llvm/amdgcn`), and the
  compiler as scripts running the root's clang tools under `lib/llvm/bin`
  (a stand-in for this machine only: TheRock's ships its own LLVM);
- rocm_sdk_device_<target> per target, requiring rocm-sdk-libraries.

All at one version. Prints each wheel's file name and sha256.
"""

import argparse
import glob
import hashlib
import io
import os
import pathlib
import sys
import tarfile

from wheel_zip import write_wheel

HEADER_DIRS = ["hip", "hsa", "rocprim", "hipcub", "hiprand", "rocrand", "amd_comgr"]
TOOLS = ["clang++", "clang", "clang-offload-bundler", "llvm-objcopy", "llvm-cxxfilt"]
TAG = "py3-none-linux_x86_64"


def stand_in(out, dist, version, requires, files):
    """One SDK wheel; prints its file name and sha256."""
    path = write_wheel(out, dist, version, TAG, requires, files, generator="stand-in", metadata_version="2.1")
    print(path.name, hashlib.sha256(path.read_bytes()).hexdigest())


def devel_tar(version, llvm, runtime):
    """`_devel.tar`: the platform tree, linking what rocm-sdk-core ships."""
    release = version.split("a")[0].split("b")[0].split("rc")[0].split(".dev")[0].split("+")[0]
    major, minor, patch = release.split(".")
    buf = io.BytesIO()
    root = "_rocm_sdk_devel"
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        def add(name, data, mode=0o644):
            info = tarfile.TarInfo("%s/%s" % (root, name))
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))

        def link(name, target):
            info = tarfile.TarInfo("%s/%s" % (root, name))
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)

        add("include/rocm-core/rocm_version.h", (
            "#pragma once\n#define ROCM_VERSION_MAJOR %s\n#define ROCM_VERSION_MINOR %s\n#define ROCM_VERSION_PATCH %s\n"
            % (major, minor, patch)).encode())
        def copy_tree(src, dest):
            # Relative links stay links, absolute ones become files (an
            # archive's links must stay inside it); links to a directory
            # above (Debian's hsa/hsa -> .) are left out, as TheRock has none.
            for dirpath, dirnames, filenames in os.walk(src):
                rel = os.path.relpath(dirpath, src)
                for name in sorted(filenames) + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
                    path = os.path.join(dirpath, name)
                    arc = os.path.normpath(os.path.join(dest, rel, name))
                    target = os.readlink(path) if os.path.islink(path) else None
                    if target and not target.startswith("/"):
                        if not os.path.realpath(dirpath).startswith(os.path.realpath(path)):
                            link(arc, target)
                    elif os.path.isfile(path):
                        add(arc, pathlib.Path(path).read_bytes())

        for d in HEADER_DIRS:
            if os.path.isdir("/usr/include/" + d):
                copy_tree("/usr/include/" + d, "include/" + d)
        add("share/hip/version", pathlib.Path("/usr/share/hip/version").read_bytes())
        for tool in TOOLS:
            add("lib/llvm/bin/" + tool, ('#!/bin/sh\nexec %s/bin/%s "$@"\n' % (llvm, tool)).encode(), 0o755)
        copy_tree(glob.glob(llvm + "/lib/clang/*/amdgcn")[0], "lib/llvm/amdgcn")
        for name in ("libamdhip64.so", runtime):
            link("lib/" + name, "../../_rocm_sdk_core/lib/" + runtime)
        add(".info/version", (version + "\n").encode())
    return buf.getvalue()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=pathlib.Path)
    p.add_argument("--version", required=True)
    p.add_argument("--targets", default="gfx1200,gfx1201")
    a = p.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    llvm = sorted(glob.glob("/usr/lib/llvm-*/bin/clang++"), key=lambda p: int(p.split("-")[1].split("/")[0]))[-1]
    llvm = llvm.rsplit("/bin/", 1)[0]
    hip = os.path.realpath("/usr/lib/x86_64-linux-gnu/libamdhip64.so")
    runtime = "libamdhip64.so." + os.path.basename(hip).split(".so.")[1].split(".")[0]
    stand_in(a.out, "rocm-sdk-core", a.version, [], {
        "rocm_sdk_core/__init__.py": b"",
        "_rocm_sdk_core/lib/" + runtime: pathlib.Path(hip).read_bytes(),
    })
    stand_in(a.out, "rocm-sdk-libraries", a.version, ["rocm-sdk-core==" + a.version], {
        "rocm_sdk_libraries/__init__.py": b"",
        "_rocm_sdk_libraries/lib/.keep": b"",
    })
    stand_in(a.out, "rocm-sdk-devel", a.version, ["rocm-sdk-core==" + a.version], {
        "rocm_sdk_devel/__init__.py": b"",
        "rocm_sdk_devel/_devel.tar": devel_tar(a.version, llvm, runtime),
    })
    for t in a.targets.split(","):
        stand_in(a.out, "rocm-sdk-device-" + t, a.version, ["rocm-sdk-libraries==" + a.version], {
            "_rocm_sdk_libraries/.kpack/.keep-%s" % t: b"",
        })


if __name__ == "__main__":
    sys.exit(main())

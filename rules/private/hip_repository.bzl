"""Repository rule: a HIP toolchain from a ROCm installation.

ROCm root: the `rocm_path` attribute, else $ROCM_PATH, else /opt/rocm, else
/usr (Debian/Ubuntu packages). Layouts understood:
  /opt/rocm and TheRock tarballs: llvm/bin or lib/llvm/bin, amdgcn/bitcode or
  lib/llvm/amdgcn/bitcode, lib/libamdhip64.so;
  Debian: /usr/lib/llvm-<N>/bin, /usr/lib/<triple>/amdgcn/bitcode,
  /usr/lib/<triple>/libamdhip64.so.
The targets each compiler can build are probed (clang -print-supported-cpus,
and for the ROCm clang the device library's ISA bitcode files).

Second device compiler (optional): `zig` attribute, else $ROCM_ZIG, else the
`ziglang` package in <rules_rocm checkout>/.venv; "none" disables it. Used
for self-contained device code on targets the ROCm clang lacks.
"""

load(":gfx_families.bzl", "GFX_TARGETS")

def _exists(rctx, p):
    return p and rctx.path(p).exists

def _first(rctx, candidates):
    for c in candidates:
        if _exists(rctx, c):
            return c
    return None

def _llvm_dirs(rctx, root):
    # /usr/lib/llvm-15/bin etc., newest first.
    lib = rctx.path(root + "/lib")
    if not lib.exists:
        return []
    found = []
    for entry in lib.readdir():
        name = entry.basename
        if name.startswith("llvm-") and name[5:].isdigit():
            found.append((int(name[5:]), str(entry) + "/bin"))
    return [d for _, d in sorted(found, reverse = True)]

def _find_root(rctx):
    if rctx.attr.rocm_path:
        return rctx.attr.rocm_path, "rocm_path attribute"
    env = rctx.os.environ.get("ROCM_PATH", "")
    if env:
        return env, "$ROCM_PATH"
    for c in ("/opt/rocm", "/usr"):
        if _exists(rctx, c + "/include/hip/hip_runtime.h"):
            return c, "default search"
    return None, None

def _probe_cpus(rctx, argv):
    r = rctx.execute(argv + ["--target=amdgcn-amd-amdhsa", "-nogpulib", "-print-supported-cpus"], timeout = 60)
    cpus = {}
    for line in (r.stdout + "\n" + r.stderr).splitlines():
        w = line.strip()
        if w.startswith("gfx") and " " not in w:
            cpus[w] = True
    return cpus

def _version(rctx, root):
    h = root + "/include/hip/hip_version.h"
    if not _exists(rctx, h):
        return ""
    major = ""
    minor = ""
    for line in rctx.read(h).splitlines():
        parts = [p for p in line.replace("\t", " ").split(" ") if p]
        if len(parts) == 3 and parts[0] == "#define":
            if parts[1] == "HIP_VERSION_MAJOR":
                major = parts[2]
            elif parts[1] == "HIP_VERSION_MINOR":
                minor = parts[2]
    return major + "." + minor if major else ""

def _isa_bitcode(rctx, device_lib_path):
    """Targets with oclc_isa_version_*.bc; None when the layout has no per-ISA files."""
    names = [e.basename for e in rctx.path(device_lib_path).readdir()]
    isa = [n[len("oclc_isa_version_"):-3] for n in names if n.startswith("oclc_isa_version_") and n.endswith(".bc")]
    if not isa:
        return None
    return {"gfx" + v: True for v in isa}

def _find_zig(rctx):
    # "none" turns the second compiler off.
    if rctx.attr.zig:
        return None if rctx.attr.zig == "none" else rctx.attr.zig
    env = rctx.os.environ.get("ROCM_ZIG", "")
    if env:
        return None if env == "none" else env

    # MODULE.bazel: present in a checkout and in a BCR archive alike.
    venv_lib = rctx.path(Label("//:MODULE.bazel")).dirname.get_child(".venv").get_child("lib")
    if venv_lib.exists:
        for py in sorted([str(e) for e in venv_lib.readdir()], reverse = True):
            z = py + "/site-packages/ziglang/zig"
            if _exists(rctx, z):
                return z
    return None

def _sort(targets):
    return [t for t in GFX_TARGETS if t in targets]

def _rocm_hip_repository_impl(rctx):
    root, how = _find_root(rctx)
    unavailable = ""
    clang = None
    bundler = None
    objcopy = None
    device_lib = ""
    runtime_dir = ""
    clang_targets = []
    nogpulib = []
    clang_name = ""
    version = ""
    if not root:
        unavailable = ("no ROCm installation found (looked at $ROCM_PATH, /opt/rocm, /usr). " +
                       "Install ROCm (or Debian's hipcc + rocm-device-libs) or set ROCM_PATH / " +
                       "rocm_hip_repository(rocm_path = ...).")
    else:
        version = _version(rctx, root)
        clang_dirs = []
        if rctx.os.environ.get("HIP_CLANG_PATH"):
            clang_dirs.append(rctx.os.environ["HIP_CLANG_PATH"])
        clang_dirs += [root + "/llvm/bin", root + "/lib/llvm/bin"] + _llvm_dirs(rctx, root)
        clang = rctx.attr.clang or _first(rctx, [d + "/clang++" for d in clang_dirs])
        if not clang:
            unavailable = "ROCm root {} ({}) has no clang++ under {}".format(root, how, ", ".join(clang_dirs))
        else:
            clang_dir = str(rctx.path(clang).realpath.dirname)
            bundler = _first(rctx, [clang_dir + "/clang-offload-bundler"] + [d + "/clang-offload-bundler" for d in clang_dirs])
            objcopy = _first(rctx, [clang_dir + "/llvm-objcopy"] + [d + "/llvm-objcopy" for d in clang_dirs])
            device_lib = _first(rctx, [
                root + "/amdgcn/bitcode",
                root + "/lib/llvm/amdgcn/bitcode",
                root + "/llvm/amdgcn/bitcode",
                root + "/lib/x86_64-linux-gnu/amdgcn/bitcode",
                root + "/lib64/amdgcn/bitcode",
            ])
            runtime = _first(rctx, [
                root + "/lib/libamdhip64.so",
                root + "/lib64/libamdhip64.so",
                root + "/lib/x86_64-linux-gnu/libamdhip64.so",
            ])
            runtime_dir = str(rctx.path(runtime).dirname) if runtime else ""
            if not device_lib:
                unavailable = "ROCm root {} has no device library (amdgcn/bitcode/ocml.bc); install rocm-device-libs".format(root)
            elif not bundler or not objcopy:
                unavailable = "the ROCm LLVM at {} lacks clang-offload-bundler or llvm-objcopy".format(clang_dir)
            elif not runtime:
                unavailable = "ROCm root {} has no libamdhip64.so; install the HIP runtime (libamdhip64-dev)".format(root)
            else:
                cpus = _probe_cpus(rctx, [clang])
                isa = _isa_bitcode(rctx, device_lib)
                for t in GFX_TARGETS:
                    if t not in cpus:
                        continue
                    if isa == None or t in isa:
                        clang_targets.append(t)
                    else:
                        # Accepted by the compiler but without ISA bitcode:
                        # only code that needs no device library builds.
                        nogpulib.append(t)
                r = rctx.execute([clang, "--version"])
                first = r.stdout.splitlines()[0] if r.stdout else "clang"
                clang_name = "{} (ROCm {} at {})".format(first.strip(), version or "?", root)
                rctx.symlink(clang, "bin/clang++")
                rctx.symlink(bundler, "bin/clang-offload-bundler")
                rctx.symlink(objcopy, "bin/llvm-objcopy")

    zig = _find_zig(rctx)
    zig_targets = []
    zig_name = ""
    if zig:
        if not _exists(rctx, zig):
            fail("rocm_hip_repository: the zig compiler {} does not exist (from the zig attribute or $ROCM_ZIG)".format(zig))
        zig_targets = _sort(_probe_cpus(rctx, [zig, "clang"]))
        r = rctx.execute([zig, "clang", "--version"])
        zig_name = "zig clang {}".format(r.stdout.splitlines()[0].replace("clang version ", "").split(" ")[0] if r.stdout else "?")
        rctx.symlink(zig, "bin/zig")

    host_arch = clang_targets[0] if clang_targets else ""
    rctx.file("BUILD.bazel", """\
load("{bzl}", "hip_toolchain")

package(default_visibility = ["//visibility:public"])

# Generated by rocm_hip_repository. ROCm root: {root} ({how}).
hip_toolchain(
    name = "hip",
    bundler = {bundler},
    objcopy = {objcopy},
    clang = {clang},
    clang_name = {clang_name},
    clang_nogpulib_targets = {nogpulib},
    clang_targets = {clang_targets},
    device_lib_path = {device_lib},
    host_offload_arch = {host_arch},
    rocm_path = {root_str},
    rocm_version = {version},
    runtime_lib_dir = {runtime_dir},
    second_compiler = {zig},
    second_compiler_name = {zig_name},
    second_compiler_targets = {zig_targets},
    unavailable = {unavailable},
)

toolchain(
    name = "toolchain",
    exec_compatible_with = [
        "@platforms//os:linux",
        "@platforms//cpu:x86_64",
    ],
    toolchain = ":hip",
    toolchain_type = "{toolchain_type}",
)
""".format(
        bzl = _abs_label(Label("//rules/private:hip_toolchain.bzl")),
        toolchain_type = _abs_label(Label("//rules:hip_toolchain_type")),
        root = root,
        how = how,
        bundler = repr(":bin/clang-offload-bundler") if not unavailable else "None",
        objcopy = repr(":bin/llvm-objcopy") if not unavailable else "None",
        clang = repr(":bin/clang++") if not unavailable else "None",
        clang_name = repr(clang_name),
        nogpulib = repr(nogpulib),
        clang_targets = repr(clang_targets),
        device_lib = repr(device_lib or ""),
        host_arch = repr(host_arch),
        root_str = repr(root or ""),
        version = repr(version),
        runtime_dir = repr(runtime_dir),
        zig = repr(":bin/zig") if zig else "None",
        zig_name = repr(zig_name),
        zig_targets = repr(zig_targets),
        unavailable = repr(unavailable),
    ))
    rctx.file("targets.bzl", "ROCM_CLANG_TARGETS = {}\nSECOND_COMPILER_TARGETS = {}\n".format(repr(clang_targets), repr(zig_targets)))

def _abs_label(label):
    s = str(label)
    return s if s.startswith("@") else "@" + s

rocm_hip_repository = repository_rule(
    implementation = _rocm_hip_repository_impl,
    attrs = {
        "clang": attr.string(doc = "Explicit ROCm clang++ (default: found under the ROCm root)."),
        "rocm_path": attr.string(doc = "ROCm root; default $ROCM_PATH, /opt/rocm, /usr."),
        "zig": attr.string(doc = "zig binary for the second device compiler ('none': no second compiler); default $ROCM_ZIG or <rules_rocm>/.venv's ziglang."),
    },
    environ = ["ROCM_PATH", "ROCM_ZIG", "HIP_CLANG_PATH"],
    local = True,
    doc = "Configures a HIP toolchain from a local ROCm installation.",
)

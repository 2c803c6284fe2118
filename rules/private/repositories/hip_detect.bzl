"""Detection of a ROCm installation for the HIP repository rules: reads, never writes.

ROCm root: the `rocm_path` attribute, else $ROCM_PATH, else /opt/rocm, else
/usr (Debian/Ubuntu packages). Layouts understood:
  /opt/rocm and TheRock tarballs: llvm/bin or lib/llvm/bin, amdgcn/bitcode or
  lib/llvm/amdgcn/bitcode, lib/libamdhip64.so;
  Debian: /usr/lib/llvm-<N>/bin, the device libraries in clang's resource
  directory (<resource dir>/amdgcn/bitcode) or /usr/lib/<triple>/amdgcn/bitcode,
  /usr/lib/<triple>/libamdhip64.so.
`detect_rocm` finds everything and returns a struct of facts, which
hip_repository.bzl writes into the repository's files.
"""

load("//rules/private/data:gfx_families.bzl", "GFX_TARGETS")
load("//rules/private/data:rocm_library_table.bzl", "ROCM_LIBRARIES", "library_version", "parse_version_header", "refused_targets")
load(":repository_utils.bzl", "attr_or_env", "exists", "first_existing", "stdout_of")

def _llvm_dirs(rctx, root):
    # /usr/lib/llvm-21/bin etc., newest first.
    lib = rctx.path(root + "/lib")
    if not lib.exists:
        return []
    found = []
    for entry in lib.readdir():
        name = entry.basename
        if name.startswith("llvm-") and name[5:].isdigit():
            found.append((int(name[5:]), str(entry) + "/bin"))
    return [d for _, d in sorted(found, reverse = True)]

def find_rocm_root(rctx):
    """(root, where it came from): the `rocm_path` attribute, $ROCM_PATH, /opt/rocm, /usr; (None, None) if none."""
    given = attr_or_env(rctx, rctx.attr.rocm_path, "rocm_path attribute", "ROCM_PATH")
    if given.value:
        return given.value, given.source
    for c in ("/opt/rocm", "/usr"):
        if exists(rctx, c + "/include/hip/hip_runtime.h"):
            return c, "default search"
    return None, None

def _clang_dirs(rctx, root, clang_dirs = []):
    return list(clang_dirs) + [root + "/llvm/bin", root + "/lib/llvm/bin"] + _llvm_dirs(rctx, root)

def find_clang(rctx):
    """The clang++ of the ROCm find_rocm_root finds (as detect_rocm finds it), or None."""
    root, _ = find_rocm_root(rctx)
    if not root:
        return None
    return first_existing(rctx, [d + "/clang++" for d in _clang_dirs(rctx, root)])

NOT_FOUND = (
    "no ROCm installation found (looked at $ROCM_PATH, /opt/rocm, /usr). " +
    "Install ROCm (or Debian's hipcc + rocm-device-libs) or set ROCM_PATH / " +
    "rocm_hip_repository(rocm_path = ...)."
)

def _probe_cpus(rctx, clang):
    r = rctx.execute([clang, "--target=amdgcn-amd-amdhsa", "-nogpulib", "-print-supported-cpus"], timeout = 60)
    cpus = {}
    for line in (r.stdout + "\n" + r.stderr).splitlines():
        w = line.strip()
        if w.startswith("gfx") and " " not in w:
            cpus[w] = True
    return cpus

def _hip_version(rctx, root):
    """struct(short = 'major.minor' or '', number = HIP_VERSION as hip_version.h computes it or 0)."""
    h = root + "/include/hip/hip_version.h"
    if not exists(rctx, h):
        return struct(short = "", number = 0)
    v = parse_version_header(rctx.read(h), "HIP_VERSION").split(".")
    return struct(
        short = ".".join(v[:2]),
        number = int(v[0]) * 10000000 + int(v[1]) * 100000 + int(v[2]) if len(v) == 3 else 0,
    )

def _isa_bitcode(rctx, device_lib_path):
    """Targets with oclc_isa_version_*.bc; None when the layout has no per-ISA files."""
    names = [e.basename for e in rctx.path(device_lib_path).readdir()]
    isa = [n[len("oclc_isa_version_"):-3] for n in names if n.startswith("oclc_isa_version_") and n.endswith(".bc")]
    if not isa:
        return None
    return {"gfx" + v: True for v in isa}

def _gfx_targets(rctx, clang, device_lib):
    """(targets clang compiles with the device library, targets only without it)."""
    cpus = _probe_cpus(rctx, clang)
    isa = _isa_bitcode(rctx, device_lib)
    targets = []
    nogpulib = []
    for t in GFX_TARGETS:
        if t not in cpus:
            continue
        if isa == None or t in isa:
            targets.append(t)
        else:
            # Accepted by the compiler but without ISA bitcode: only code
            # that needs no device library builds.
            nogpulib.append(t)
    return targets, nogpulib

def _device_lib(rctx, root, clang):
    candidates = [
        root + "/amdgcn/bitcode",
        root + "/lib/llvm/amdgcn/bitcode",
        root + "/llvm/amdgcn/bitcode",
    ]

    # Debian's rocm-device-libs-<N> installs into clang's resource directory.
    resource_dir = stdout_of(rctx, [clang, "-print-resource-dir"], timeout = 30)
    if resource_dir:
        candidates.append(resource_dir + "/amdgcn/bitcode")
    candidates += [
        root + "/lib/x86_64-linux-gnu/amdgcn/bitcode",
        root + "/lib64/amdgcn/bitcode",
    ]
    for c in candidates:
        if exists(rctx, c + "/ocml.bc"):
            return c, candidates
    return None, candidates

def _libraries(rctx, root, lib_dir):
    """name -> struct(version, refused, unavailable) of every ROCM_LIBRARIES entry."""
    libs = {}
    for name, lib in ROCM_LIBRARIES.items():
        header = root + "/include/" + lib.header
        shared = lib_dir + "/lib{}.so".format(lib.link) if lib.link else None
        missing = header if not exists(rctx, header) else (shared if shared and not exists(rctx, shared) else None)
        if missing:
            libs[name] = struct(
                version = "",
                refused = {},
                unavailable = "{} is not installed in the ROCm at {} ({} is missing); install {}".format(
                    lib.display,
                    root,
                    missing,
                    lib.package,
                ),
            )
            continue
        version = library_version(name, rctx.read(header))
        libs[name] = struct(version = version, refused = refused_targets(name, version), unavailable = "")
    return libs

def _dpkg_version(rctx, package):
    """The upstream version of an installed Debian package ('6.4.3' of '6.4.3-5'), or ''."""
    status = "/var/lib/dpkg/status"
    if not exists(rctx, status):
        return ""
    for stanza in rctx.read(status).split("\n\n"):
        lines = stanza.splitlines()
        if "Package: " + package not in lines or "Status: install ok installed" not in lines:
            continue
        for line in lines:
            if line.startswith("Version: "):
                v = line[len("Version: "):].split(":")[-1]
                return v.split("-")[0].split("+")[0].split("~")[0]
    return ""

def _is_release(v):
    return v.count(".") == 2 and v.replace(".", "").isdigit()

def _rocm_release(rctx, root, hip_version):
    """struct(version = 'major.minor.patch' of the ROCm release, source = where it was read)."""
    header = root + "/include/rocm-core/rocm_version.h"
    if exists(rctx, header):
        v = parse_version_header(rctx.read(header), "ROCM_VERSION")
        if v:
            return struct(version = v, source = header)
    info = root + "/.info/version"
    if exists(rctx, info):
        v = rctx.read(info).strip().split("-")[0]
        if _is_release(v):
            return struct(version = v, source = info)
    if root == "/usr":
        v = _dpkg_version(rctx, "libamdhip64-dev")
        if _is_release(v):
            return struct(version = v, source = "the Debian package libamdhip64-dev " + v)
    return struct(version = (hip_version or "0.0") + ".0", source = "HIP's hip_version.h (no ROCm release version found; patch 0)")

def _unusable(root, how, version):
    return lambda why: struct(root = root, how = how, version = version, unavailable = why)

def detect_rocm(rctx, root, how, clang_dirs = [], missing = NOT_FOUND):
    """Finds the parts of the ROCm at `root`; writes nothing.

    Args:
      rctx: the repository context (its `clang` attribute, if set, wins).
      root: the ROCm root, or None when none was found.
      how: where `root` came from, for messages.
      clang_dirs: directories searched for clang++ before the root's own.
      missing: the message when `root` is None.

    Returns a struct of facts: `unavailable` says why the installation cannot
    be used ("" when it can); the other fields feed templates/rocm_hip.BUILD.tpl.
    """
    if not root:
        return struct(root = None, how = None, version = "", unavailable = missing)
    if not exists(rctx, root + "/include/hip/hip_runtime.h"):
        return _unusable(root, how, "")(
            "{} ({}) is not a ROCm: it has no include/hip/hip_runtime.h (looked for a TheRock tarball, /opt/rocm or Debian /usr layout)".format(root, how),
        )
    hip_version = _hip_version(rctx, root)
    version = hip_version.short
    fail_with = _unusable(root, how, version)
    clang_dirs = _clang_dirs(rctx, root, clang_dirs)
    clang = rctx.attr.clang or first_existing(rctx, [d + "/clang++" for d in clang_dirs])
    if not clang:
        return fail_with("ROCm root {} ({}) has no clang++ under {}".format(root, how, ", ".join(clang_dirs)))
    clang_dir = str(rctx.path(clang).realpath.dirname)
    bundler = first_existing(rctx, [clang_dir + "/clang-offload-bundler"] + [d + "/clang-offload-bundler" for d in clang_dirs])
    objcopy = first_existing(rctx, [clang_dir + "/llvm-objcopy"] + [d + "/llvm-objcopy" for d in clang_dirs])
    if not bundler or not objcopy:
        return fail_with("the LLVM at {} lacks clang-offload-bundler or llvm-objcopy".format(clang_dir))
    cxxfilt = first_existing(rctx, [clang_dir + "/llvm-cxxfilt"] + [d + "/llvm-cxxfilt" for d in clang_dirs])
    device_lib, looked = _device_lib(rctx, root, clang)
    if not device_lib:
        return fail_with("no AMDGPU device library (ocml.bc) for {} in {}; install rocm-device-libs (Debian: rocm-device-libs-<clang major>)".format(clang, ", ".join(looked)))
    runtime = first_existing(rctx, [
        root + "/lib/libamdhip64.so",
        root + "/lib64/libamdhip64.so",
        root + "/lib/x86_64-linux-gnu/libamdhip64.so",
    ])
    if not runtime:
        return fail_with("ROCm root {} has no libamdhip64.so; install the HIP runtime (libamdhip64-dev)".format(root))

    runtime_dir = str(rctx.path(runtime).dirname)
    targets, nogpulib = _gfx_targets(rctx, clang, device_lib)
    version_text = rctx.execute([clang, "--version"]).stdout
    first = version_text.splitlines()[0].strip() if version_text else "clang"
    return struct(
        root = root,
        how = how,
        version = version,
        unavailable = "",
        clang = clang,
        clang_name = "{} (ROCm {} at {})".format(first, version or "?", root),
        bundler = bundler,
        objcopy = objcopy,
        cxxfilt = cxxfilt,
        device_lib = device_lib,
        runtime_dir = runtime_dir,
        targets = targets,
        nogpulib = nogpulib,
        libraries = _libraries(rctx, root, runtime_dir),
        release = _rocm_release(rctx, root, version),
        hip_version_number = hip_version.number,
    )

"""Repository rule: a HIP toolchain from a local ROCm installation.

ROCm root: the `rocm_path` attribute, else $ROCM_PATH, else /opt/rocm, else
/usr (Debian/Ubuntu packages). Layouts understood:
  /opt/rocm and TheRock tarballs: llvm/bin or lib/llvm/bin, amdgcn/bitcode or
  lib/llvm/amdgcn/bitcode, lib/libamdhip64.so;
  Debian: /usr/lib/llvm-<N>/bin, the device libraries in clang's resource
  directory (<resource dir>/amdgcn/bitcode) or /usr/lib/<triple>/amdgcn/bitcode,
  /usr/lib/<triple>/libamdhip64.so.
`detect_rocm` finds everything and returns a struct; the repository's files
are then written from templates/rocm_hip.*.tpl.
"""

load(":gfx_families.bzl", "GFX_TARGETS")
load(":labels.bzl", "abs_label")
load(":repository_utils.bzl", "attr_or_env", "exists", "first_existing", "render", "stdout_of", "write_template")
load(":rocm_libraries.bzl", "HIP_PLATFORM_DEFINE", "ROCM_LIBRARIES", "library_version", "parse_version_header", "refused_targets")

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

def _find_root(rctx):
    given = attr_or_env(rctx, rctx.attr.rocm_path, "rocm_path attribute", "ROCM_PATH")
    if given.value:
        return given.value, given.source
    for c in ("/opt/rocm", "/usr"):
        if exists(rctx, c + "/include/hip/hip_runtime.h"):
            return c, "default search"
    return None, None

_NOT_FOUND = (
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

def _wrapper(rctx, name, target, in_repository):
    # A script, not a symlink: remote workers get a copy of what Bazel
    # uploads, and a copied clang finds neither its resource directory nor
    # ld.lld. The script runs the installed tool where it lives, or the
    # repository's own copy through the path it was invoked by (the
    # execution root's external/<repository>/bin/..., inside a sandbox too).
    tool = "\"$(dirname \"$0\")/../{}\"".format(target) if in_repository else "'{}'".format(target)
    write_template(rctx, "bin/" + name, "rocm_hip.tool.sh.tpl", {"{TOOL}": tool}, executable = True)

def _unusable(root, how, version):
    return lambda why: struct(root = root, how = how, version = version, unavailable = why)

def detect_rocm(rctx, root, how, clang_dirs = [], missing = _NOT_FOUND):
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
    clang_dirs = list(clang_dirs) + [root + "/llvm/bin", root + "/lib/llvm/bin"] + _llvm_dirs(rctx, root)
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

def _library_target(rctx, name, display, info, deps = [], include_dir = "", lib_dir = "", link = "", rocm_version = "", in_repository = False):
    """A rocm_library stanza; `info` is struct(version, refused, unavailable)."""
    return render(rctx, "rocm_hip.library.BUILD.tpl", {
        "{IN_REPOSITORY}": repr(in_repository),
        "{HDRS}": "glob([{}], allow_empty = True)".format(repr(include_dir + "/**")) if in_repository else "[]",
        "{SHARED}": "glob([{}], allow_empty = True)".format(repr("{}/lib{}.so*".format(lib_dir, link))) if in_repository and link else "[]",
        "{NAME}": repr(name),
        "{DEPS}": repr([":" + d for d in deps]),
        "{DISPLAY}": repr(display),
        "{INCLUDE_DIR}": repr(include_dir),
        "{LIB_DIR}": repr(lib_dir),
        "{LINK}": repr(link),
        "{REFUSED}": repr(info.refused),
        "{ROCM_VERSION}": repr(rocm_version),
        "{UNAVAILABLE}": repr(info.unavailable),
        "{VERSION}": repr(info.version),
    })

def _no_rocm(found):
    return struct(version = "", refused = {}, unavailable = "no usable ROCm: " + found.unavailable)

def _library_targets(rctx, found, in_repository):
    """One rocm_library per ROCM_LIBRARIES entry: found, refusing targets, or unavailable."""
    ok = found.unavailable == ""
    return "\n".join([
        _library_target(
            rctx,
            name,
            ROCM_LIBRARIES[name].display,
            found.libraries[name] if ok else _no_rocm(found),
            deps = ROCM_LIBRARIES[name].uses,
            include_dir = "" if found.root in (None, "/usr") else found.root + "/include",
            lib_dir = found.runtime_dir if ok else "",
            link = ROCM_LIBRARIES[name].link or "",
            rocm_version = found.version,
            in_repository = in_repository,
        )
        for name in sorted(ROCM_LIBRARIES.keys())
    ])

# The include directories of ROCm components (a /usr root holds every
# other package's headers too: only these are rocm_headers).
_ROCM_HEADER_DIRS = [
    "amd_comgr",
    "hip",
    "hipblas",
    "hipblas-common",
    "hipblaslt",
    "hipcub",
    "hipfft",
    "hiprand",
    "hipsolver",
    "hipsparse",
    "hipsparselt",
    "hsa",
    "miopen",
    "rccl",
    "rocblas",
    "rocfft",
    "rocm-core",
    "rocprim",
    "rocrand",
    "rocsolver",
    "rocsparse",
    "roctracer",
]

def _link_header_dir(rctx, src, dest):
    """Links `dest` to the header directory `src`, leaving out links back into it.

    Debian's /usr/include/hsa holds `hsa -> .`, which a glob would follow
    forever: such a directory is mirrored entry by entry instead.
    """
    real = str(rctx.path(src).realpath)
    entries = rctx.path(src).readdir()
    loops = [e for e in entries if real == str(e.realpath) or real.startswith(str(e.realpath) + "/")]
    if not loops:
        rctx.symlink(src, dest)
        return
    for e in entries:
        if e not in loops:
            rctx.symlink(e, dest + "/" + e.basename)

def _version_number(release):
    """XLA's integer spelling of a ROCm release: 70204 for '7.2.4'."""
    major, minor, patch = [int(p) for p in release.split(".")]
    return major * 10000 + minor * 100 + patch

def _rocm_headers(rctx, found):
    """rocm/include/<dir> (links to the root's header directories), rocm/rocm_config.h and the rocm_headers target."""
    dirs = [d for d in _ROCM_HEADER_DIRS if exists(rctx, found.root + "/include/" + d)]
    for d in dirs:
        _link_header_dir(rctx, found.root + "/include/" + d, "rocm/include/" + d)
    miopen = found.libraries["miopen"]
    miopen_define = ""
    if not miopen.unavailable and miopen.version:
        major, minor, patch = [int(p) for p in miopen.version.split(".")]
        miopen_define = "\n// MIOpen {}: major * 1000 + minor * 10 + patch.\n#define TF_MIOPEN_VERSION {}\n".format(
            miopen.version,
            major * 1000 + minor * 10 + patch,
        )

    # A toolkit in this repository: its execution-root path.
    root = found.root if found.root.startswith("/") else "external/{}/{}".format(rctx.name, found.root)
    write_template(rctx, "rocm/rocm_config.h", "rocm_hip.config.h.tpl", {
        "{ROOT}": root,
        "{RELEASE}": found.release.version,
        "{RELEASE_SOURCE}": found.release.source,
        "{TF_ROCM_VERSION}": str(_version_number(found.release.version)),
        "{TF_HIPRUNTIME_VERSION}": str(found.hip_version_number),
        "{MIOPEN}": miopen_define,
    })
    return render(rctx, "rocm_hip.headers.BUILD.tpl", {
        "{ROOT}": root,
        "{HEADER_DIRS}": repr(dirs),
        "{DEFINES}": repr([HIP_PLATFORM_DEFINE]),
    })

# What a toolkit in a repository must make inputs of the actions that use
# it: the compiler, its libraries and resource directory, the device
# libraries and the headers (bin/ holds the wrappers).
def _toolkit_globs(found):
    llvm = found.clang.rpartition("/bin/")[0]
    return [
        "bin/**",
        llvm + "/bin/**",
        llvm + "/lib/clang/**",
        llvm + "/lib/*.so*",
        found.device_lib + "/**",
        found.root + "/include/**",
        # clang reads HIP's version here (else it assumes HIP 3.5 and skips
        # its runtime wrapper headers).
        found.root + "/share/hip/**",
        found.root + "/bin/.hipVersion",
    ]

def _write_toolkit(rctx, found, in_repository = False):
    """Writes the toolkit's BUILD file, wrappers, headers and rocm_config.h from `found`."""
    ok = found.unavailable == ""
    if ok:
        _wrapper(rctx, "clang++", found.clang, in_repository)
        _wrapper(rctx, "clang-offload-bundler", found.bundler, in_repository)
        _wrapper(rctx, "llvm-objcopy", found.objcopy, in_repository)
        if found.cxxfilt:
            _wrapper(rctx, "llvm-cxxfilt", found.cxxfilt, in_repository)
    clang_targets = repr(found.targets if ok else [])
    nogpulib = repr(found.nogpulib if ok else [])
    in_repo = ok and in_repository
    write_template(rctx, "BUILD.bazel", "rocm_hip.BUILD.tpl", {
        "{ROOT}": str(found.root),
        "{HOW}": str(found.how),
        "{HIP_TOOLCHAIN_BZL}": abs_label(Label("//rules/private:hip_toolchain.bzl")),
        "{ROCM_LIBRARY_BZL}": abs_label(Label("//rules/private:rocm_library.bzl")),
        "{TOOLCHAIN_TYPE}": abs_label(Label("//rules:hip_toolchain_type")),
        "{BUNDLER}": repr(":bin/clang-offload-bundler" if ok else None),
        "{OBJCOPY}": repr(":bin/llvm-objcopy" if ok else None),
        "{CXXFILT}": repr(":bin/llvm-cxxfilt" if ok and found.cxxfilt else None),
        "{CLANG}": repr(":bin/clang++" if ok else None),
        "{CLANG_NAME}": repr(found.clang_name if ok else ""),
        "{NOGPULIB}": nogpulib,
        "{TARGETS}": clang_targets,
        "{DEVICE_LIB}": repr(found.device_lib if ok else ""),
        "{HOST_ARCH}": repr(found.targets[0] if ok and found.targets else ""),
        "{ROCM_PATH}": repr(found.root or ""),
        "{ROCM_VERSION}": repr(found.version),
        "{RUNTIME_DIR}": repr(found.runtime_dir if ok else ""),
        "{UNAVAILABLE}": repr(found.unavailable),
        "{IN_REPOSITORY}": repr(in_repo),
        "{FILES}": "glob({}, allow_empty = True)".format(repr(_toolkit_globs(found))) if in_repo else "[]",
        "{RUNTIME_FILES}": "glob([{}], allow_empty = True)".format(repr(found.runtime_dir + "/*.so*")) if in_repo else "[]",
        "{LIBRARIES}": _library_targets(rctx, found, in_repo),
        "{ROCM_HEADERS}": _rocm_headers(rctx, found) if ok else _library_target(rctx, "rocm_headers", "ROCm headers", _no_rocm(found)),
    })
    write_template(rctx, "targets.bzl", "rocm_hip.targets.bzl.tpl", {
        "{TARGETS}": clang_targets,
        "{NOGPULIB}": nogpulib,
        "{VERSION_NUMBER}": str(_version_number(found.release.version) if ok else 0),
    })

def _rocm_hip_repository_impl(rctx):
    root, how = _find_root(rctx)
    clang_dirs = [rctx.os.environ["HIP_CLANG_PATH"]] if rctx.os.environ.get("HIP_CLANG_PATH") else []
    _write_toolkit(rctx, detect_rocm(rctx, root, how, clang_dirs))

rocm_hip_repository = repository_rule(
    implementation = _rocm_hip_repository_impl,
    attrs = {
        "clang": attr.string(doc = "Explicit clang++ (default: found under the ROCm root)."),
        "rocm_path": attr.string(doc = "ROCm root; default $ROCM_PATH, /opt/rocm, /usr."),
    },
    environ = ["ROCM_PATH", "HIP_CLANG_PATH"],
    local = True,
    doc = "The `local` toolkit: a HIP toolchain and the ROCm libraries of the ROCm installed on the machine that builds ($ROCM_PATH, /opt/rocm, /usr).",
)

def _relative(found, repo_dirs):
    """`found` with its paths relative to the repository (a toolkit it downloaded)."""

    def rel(path):
        for d in repo_dirs:
            if path and path.startswith(d + "/"):
                return path[len(d) + 1:]
        return path

    fields = {k: getattr(found, k) for k in dir(found) if k not in ("to_json", "to_proto")}
    for k in ("root", "clang", "bundler", "objcopy", "cxxfilt", "device_lib", "runtime_dir"):
        fields[k] = rel(fields[k])
    return struct(**fields)

def _rocm_path_toolkit_impl(rctx):
    how = "rocm_toolkit_repository(path = ...)"
    if not exists(rctx, rctx.attr.path):
        fail("ROCm toolkit {}: path {} does not exist".format(rctx.attr.toolkit, rctx.attr.path))
    found = detect_rocm(rctx, rctx.attr.path, how)
    if found.unavailable:
        fail("ROCm toolkit {}: {}".format(rctx.attr.toolkit, found.unavailable))
    _write_toolkit(rctx, found)

def _rocm_archive_toolkit_impl(rctx):
    a = rctx.attr
    result = rctx.download_and_extract(
        url = a.urls,
        output = "toolkit",
        sha256 = a.sha256,
        stripPrefix = a.strip_prefix,
    )
    if not a.sha256:
        fail("ROCm toolkit {}: {} has no sha256; pin what was downloaded with sha256 = \"{}\"".format(a.toolkit, a.urls[0], result.sha256))
    repo = rctx.path(".")
    found = detect_rocm(rctx, str(rctx.path("toolkit")), "{} (sha256 {})".format(a.urls[0], a.sha256))
    if found.unavailable:
        fail("ROCm toolkit {}: {}".format(a.toolkit, found.unavailable))
    _write_toolkit(rctx, _relative(found, [str(repo), str(repo.realpath)]), in_repository = True)

_COMMON_ATTRS = {
    "clang": attr.string(doc = "Explicit clang++ (default: found in the toolkit)."),
    "toolkit": attr.string(doc = "The toolkit's name, for messages."),
}

rocm_path_toolkit_repository = repository_rule(
    implementation = _rocm_path_toolkit_impl,
    attrs = dict(_COMMON_ATTRS, path = attr.string(mandatory = True, doc = "The ROCm root.")),
    local = True,
    doc = "A toolkit from a ROCm installed at `path` (see rocm_toolkit_repository).",
)

rocm_archive_toolkit_repository = repository_rule(
    implementation = _rocm_archive_toolkit_impl,
    attrs = dict(
        _COMMON_ATTRS,
        sha256 = attr.string(doc = "The archive's sha256 (required; its absence fails naming the sum)."),
        strip_prefix = attr.string(doc = "A directory prefix to strip from the archive's paths."),
        urls = attr.string_list(mandatory = True, doc = "Mirrors of one archive, tried in order."),
    ),
    doc = "A toolkit from a ROCm archive (see rocm_toolkit_repository).",
)

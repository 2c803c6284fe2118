"""Repository rules: a HIP toolchain from a ROCm installation (a path, or a tarball).

What the installation has is found by hip_detect.bzl (`detect_rocm`, a
struct of facts); this file only writes the repository from those facts and
templates/rocm_hip.*.tpl.
"""

load("//rules/private/data:rocm_library_table.bzl", "HIP_PLATFORM_DEFINE", "ROCM_LIBRARIES")
load("//rules/private/util:labels.bzl", "abs_label")
load(":hip_detect.bzl", "detect_rocm", "find_rocm_root")
load(":repository_utils.bzl", "exists", "render", "sdk_version_problem", "therock_tarball_release", "write_template")

def _wrapper(rctx, name, target, in_repository):
    # A script, not a symlink: remote workers get a copy of what Bazel
    # uploads, and a copied clang finds neither its resource directory nor
    # ld.lld. The script runs the installed tool where it lives, or the
    # repository's own copy through the path it was invoked by (the
    # execution root's external/<repository>/bin/..., inside a sandbox too).
    tool = "\"$(dirname \"$0\")/../{}\"".format(target) if in_repository else "'{}'".format(target)
    write_template(rctx, "bin/" + name, "rocm_hip.tool.sh.tpl", {"{TOOL}": tool}, executable = True)

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
            rocm_version = _major_minor(found.release.version) if ok else "",
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

def _major_minor(version):
    return ".".join(version.split(".")[:2])

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

def _write_toolkit(rctx, found, in_repository = False, sdk_version = ""):
    """Writes the toolkit's BUILD file, wrappers, headers and rocm_config.h from `found`.

    `sdk_version` is the TheRock SDK release device wheels pin, or "".
    """
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
        "{HIP_TOOLCHAIN_BZL}": abs_label(Label("//rules/private/rules:hip_toolchain.bzl")),
        "{ROCM_LIBRARY_BZL}": abs_label(Label("//rules/private/rules:rocm_library.bzl")),
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
        "{ROCM_VERSION}": repr(found.release.version if ok else ""),
        "{HIP_VERSION}": repr(found.version),
        "{RUNTIME_DIR}": repr(found.runtime_dir if ok else ""),
        "{SDK_VERSION}": repr(sdk_version),
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
    root, how = find_rocm_root(rctx)
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

    # An installed ROCm's device code comes with the system: no pip package
    # to pin unless the declaration names its SDK release.
    _write_toolkit(rctx, found, sdk_version = _sdk_version(rctx.attr, ""))

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
    sdk_version = _sdk_version(a, therock_tarball_release(a.urls))
    _write_toolkit(rctx, _relative(found, [str(repo), str(repo.realpath)]), in_repository = True, sdk_version = sdk_version)

def _sdk_version(a, default):
    """The declared sdk_version (checked), else `default`."""
    if not a.sdk_version:
        return default
    problem = sdk_version_problem(a.sdk_version)
    if problem:
        fail("ROCm toolkit {}: sdk_version = \"{}\" is not a TheRock SDK release ({}); give it as the rocm-sdk packages spell it, e.g. 7.13.0a20261201".format(a.toolkit, a.sdk_version, problem))
    return a.sdk_version

def _wheel_version(rctx, dist_info):
    """The Version of the METADATA in the unpacked wheel's `dist_info` directory."""
    for line in rctx.read(dist_info + "/METADATA").splitlines():
        if line.startswith("Version:"):
            return line[len("Version:"):].strip()
    fail("{}/METADATA has no Version".format(dist_info))

# The wheels TheRock's pip SDK is built from: rocm-sdk-libraries may be
# the multi-arch package or a family's (rocm_sdk_libraries_gfx120x_all).
_PIP_SDK_PARTS = {"rocm_sdk_core": "rocm-sdk-core", "rocm_sdk_libraries": "rocm-sdk-libraries[-<family>]", "rocm_sdk_devel": "rocm-sdk-devel"}

def _rocm_pip_sdk_toolkit_impl(rctx):
    a = rctx.attr
    versions = {}
    parts = {}
    for sha256, urls in sorted(a.wheels.items()):
        name = urls[0].rpartition("/")[2].partition("?")[0] if urls else ""
        if not name.endswith(".whl") or name.count("-") < 4:
            fail("ROCm toolkit {}: {} is not a wheel's URL (<name>-<version>-<tags>.whl); wheels = {{sha256: [urls]}} lists TheRock's rocm-sdk-* wheels".format(a.toolkit, urls[0] if urls else "(no URL for sha256 " + sha256 + ")"))
        dist, version = name.split("-")[:2]
        rctx.download_and_extract(url = urls, sha256 = sha256, type = "zip", output = "sdk")
        versions[name] = _wheel_version(rctx, "sdk/{}-{}.dist-info".format(dist, version))
        for part in _PIP_SDK_PARTS:
            if dist == part or dist.startswith(part + "_"):
                parts[part] = name
    if len({v: True for v in versions.values()}) != 1:
        fail("ROCm toolkit {}: the pip SDK's wheels disagree on the version ({}): give the wheels of one SDK release".format(
            a.toolkit,
            ", ".join(["{} is {}".format(n, v) for n, v in sorted(versions.items())]),
        ))
    missing = [shown for part, shown in _PIP_SDK_PARTS.items() if part not in parts]
    if missing:
        fail("ROCm toolkit {}: the pip SDK lacks {} (wheels given: {}); TheRock's SDK is rocm-sdk-core, rocm-sdk-libraries[-<family>] and rocm-sdk-devel".format(
            a.toolkit,
            ", ".join(missing),
            ", ".join(sorted(versions.keys())),
        ))
    version = versions.values()[0]
    problem = sdk_version_problem(version)
    if problem:
        fail("ROCm toolkit {}: the pip SDK's version {} is not a TheRock SDK release ({})".format(a.toolkit, version, problem))

    # The platform tree is rocm-sdk-devel's _devel.tar[.xz]: unpacked beside
    # the other wheels' platform packages, its relative links reach them
    # (rocm-sdk init does the same in site-packages).
    tarball = None
    for suffix in (".tar.xz", ".tar"):
        if exists(rctx, "sdk/rocm_sdk_devel/_devel" + suffix):
            tarball = "sdk/rocm_sdk_devel/_devel" + suffix
            break
    if not tarball:
        fail("ROCm toolkit {}: {} has no rocm_sdk_devel/_devel.tar or _devel.tar.xz: not TheRock's devel wheel".format(a.toolkit, parts["rocm_sdk_devel"]))
    rctx.extract(tarball, output = "sdk")
    rctx.delete(tarball)
    root = "sdk/_rocm_sdk_devel"

    # XLA's link for the wheel layout: the device libraries under amdgcn/.
    if exists(rctx, root + "/llvm/amdgcn") and not exists(rctx, root + "/amdgcn"):
        rctx.symlink(root + "/llvm/amdgcn", root + "/amdgcn")
    repo = rctx.path(".")
    found = detect_rocm(rctx, str(rctx.path(root)), "TheRock pip SDK {} ({})".format(version, ", ".join(sorted(versions.keys()))))
    if found.unavailable:
        fail("ROCm toolkit {}: {}".format(a.toolkit, found.unavailable))
    _write_toolkit(rctx, _relative(found, [str(repo), str(repo.realpath)]), in_repository = True, sdk_version = _sdk_version(a, version))

_COMMON_ATTRS = {
    "clang": attr.string(doc = "Explicit clang++ (default: found in the toolkit)."),
    "sdk_version": attr.string(doc = "The exact TheRock SDK release the toolkit is (7.13.0a20261201), which device wheels pin; default: a TheRock tarball's, from its file name; none for a path."),
    "toolkit": attr.string(doc = "The toolkit's name, for messages."),
}

rocm_path_toolkit_repository = repository_rule(
    implementation = _rocm_path_toolkit_impl,
    attrs = dict(_COMMON_ATTRS, path = attr.string(mandatory = True, doc = "The ROCm root.")),
    local = True,
    doc = "A toolkit from a ROCm installed at `path` (see rocm_toolkit_repository).",
)

rocm_pip_sdk_toolkit_repository = repository_rule(
    implementation = _rocm_pip_sdk_toolkit_impl,
    attrs = dict(
        _COMMON_ATTRS,
        wheels = attr.string_list_dict(mandatory = True, doc = "TheRock's pip SDK wheels: sha256 -> mirrors of one wheel (rocm-sdk-core, rocm-sdk-libraries[-<family>], rocm-sdk-devel)."),
    ),
    doc = "A toolkit from TheRock's pip SDK wheels, laid out as `rocm-sdk path --root` lays them out (see rocm_toolkit_repository).",
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

"""WORKSPACE setup for rules_rocm (Bazel < 7 or WORKSPACE mode), and the
public repository rule for ROCm toolkits.

    load("@rules_rocm//rules:repositories.bzl", "rocm_toolkit_repository", "rules_rocm_dependencies", "rules_rocm_toolchains")
    rocm_toolkit_repository(
        name = "therock_7_2",
        urls = ["https://.../therock-dist-linux-gfx120X-all-7.2.0.tar.gz"],
        sha256 = "...",
    )
    rules_rocm_dependencies(rocm_toolkits = {"therock_7_2": "therock_7_2"})
    rules_rocm_toolchains()

@platforms and @rules_cc are expected from the caller (as every C++ workspace
already has them); rules_rocm downloads nothing itself. The rocm-wheel tool
is a prebuilt binary here (rules_rocm_dependencies(rocm_wheel = ...) or
$ROCM_WHEEL); bzlmod builds it with rules_rust instead.
"""

load("//rules/private/data:debian11_packages.bzl", "DEBIAN11_DEBS", "DEBIAN11_GLIBC_FLOOR", "DEBIAN11_SYSROOT")
load("//rules/private/repositories:hip_repository.bzl", "rocm_archive_toolkit_repository", "rocm_hip_repository", "rocm_path_toolkit_repository", "rocm_pip_sdk_toolkit_repository")
load("//rules/private/repositories:local_config_rocm_repository.bzl", "local_config_rocm_repository")
load("//rules/private/repositories:python_versions_repository.bzl", "rocm_python_versions_repository")
load("//rules/private/repositories:rocm_wheel_prebuilt_repository.bzl", "rocm_wheel_prebuilt_repository")
load("//rules/private/repositories:sysroot_hub.bzl", "rocm_sysroots_repository")
load("//rules/private/repositories:sysroot_repository.bzl", _rocm_sysroot_repository = "rocm_sysroot_repository")
load("//rules/private/repositories:toolkit_hub.bzl", "LOCAL_TOOLKIT", "rocm_toolkits_repository")
load("//rules/private/util:python_versions.bzl", "DEFAULT_PYTHON_VERSIONS", "check_python_versions")

def rocm_toolkit_repository(name, urls = [], sha256 = "", strip_prefix = "", path = "", clang = "", sdk_version = "", wheels = {}, **kwargs):
    """A ROCm toolkit: a HIP toolchain and the ROCm libraries of one ROCm.

    Exactly one of `urls` (an archive, downloaded and checked against
    `sha256`: a TheRock `therock-dist-linux-<family>-<version>.tar.gz`, an
    /opt/rocm tree packed by you), `path` (a ROCm installed on every
    machine that builds) and `wheels` (TheRock's pip SDK: rocm-sdk-core,
    rocm-sdk-libraries[-<family>] and rocm-sdk-devel, whose _devel.tar holds
    the platform tree). Layouts: TheRock (lib/llvm/bin, lib/llvm/amdgcn/
    bitcode), /opt/rocm (llvm/bin, amdgcn/bitcode), Debian's /usr
    (lib/llvm-<N>/bin, the device libraries in clang's resource directory).
    The ROCm version is read from the tree (rocm-core's rocm_version.h,
    .info/version, hip_version.h), never from a file name.

    The repository holds `:hip` (a hip_toolchain), one target per ROCm
    library (`:rocprim`, `:hipblas`, ...) and `:rocm_headers`. Bzlmod users
    declare toolkits with the extension's `rocm.toolkit` tag instead.

    Args:
      name: the repository's name.
      urls: mirrors of the archive.
      sha256: the archive's sha256 (required with urls).
      strip_prefix: a directory prefix to strip from the archive's paths.
      path: an installed ROCm's root.
      clang: an explicit clang++ (default: found in the toolkit).
      sdk_version: the exact TheRock SDK release the toolkit is, which kpack
        device wheels pin (default: a TheRock tarball's, from its file name;
        none for a path; the wheels' version for a pip SDK).
      wheels: {sha256: [urls]} of TheRock's pip SDK wheels.
      **kwargs: passed to the repository rule.
    """
    if len([k for k in (urls, path, wheels) if k]) != 1:
        fail("rocm_toolkit_repository(name = \"{}\") needs exactly one of urls (with sha256), path and wheels".format(name))
    if wheels:
        rocm_pip_sdk_toolkit_repository(name = name, toolkit = name, wheels = wheels, clang = clang, sdk_version = sdk_version, **kwargs)
    elif urls:
        rocm_archive_toolkit_repository(name = name, toolkit = name, urls = urls, sha256 = sha256, strip_prefix = strip_prefix, clang = clang, sdk_version = sdk_version, **kwargs)
    else:
        rocm_path_toolkit_repository(name = name, toolkit = name, path = path, clang = clang, sdk_version = sdk_version, **kwargs)

def rocm_sysroot_repository(name, debs = {}, urls = [], sha256 = "", strip_prefix = "", clang = "", libstdcxx = "static", **kwargs):
    """A sysroot for WORKSPACE builds (bzlmod: rocm.sysroot); pass {sysroot name: name} to rules_rocm_dependencies(rocm_sysroots = ...).

    Args:
      name: the repository's name, also the sysroot's (the flag's value).
      debs: {url: sha256} of Debian packages unpacked into the sysroot.
      urls: mirrors of one archive holding the sysroot's tree (with sha256).
      sha256: the archive's sha256.
      strip_prefix: a directory prefix to strip from the archive's paths.
      clang: explicit clang++ (default: the local ROCm's).
      libstdcxx: "static" (hidden in each library) or "shared".
      **kwargs: passed to the repository rule.
    """
    _rocm_sysroot_repository(name = name, sysroot = name, debs = debs, urls = urls, sha256 = sha256, strip_prefix = strip_prefix, clang = clang, libstdcxx = libstdcxx, **kwargs)

def rules_rocm_dependencies(python_versions = DEFAULT_PYTHON_VERSIONS, rocm_wheel = "", rocm_toolkits = {}, default_toolkit = LOCAL_TOOLKIT, local_config_rocm = "", rocm_sysroots = {}, python_interpreters = None):
    """Declares the repositories rules_rocm needs.

    Per-Python targets take Python from rules_python's toolchains, which a
    WORKSPACE registers itself (rules_python >= 1.4: py_repositories() and
    python_register_toolchains(), or local_runtime_repo for an installed
    interpreter); see docs/python.md.

    Args:
      python_versions: the minor versions --//:python_versions=all builds.
      rocm_wheel: absolute path of a prebuilt rocm-wheel binary (`cargo build
        --release --locked --manifest-path tools/Cargo.toml`); default:
        $ROCM_WHEEL (e.g. --repo_env=ROCM_WHEEL=...). Bzlmod builds it with
        rules_rust instead.
      rocm_toolkits: {toolkit name: repository name} of toolkits declared
        with rocm_toolkit_repository, selectable with
        --@rules_rocm//rocm:toolkit=<name>; `local` (the ROCm of the
        building machine) is always there.
      default_toolkit: the toolkit used when the flag is not given.
      local_config_rocm: the name under which to declare XLA's
        @local_config_rocm names (//rocm:build_defs.bzl, :rocm_headers,
        :hipblas, ...) over rules_rocm's toolkit, usually
        "local_config_rocm" (instead of XLA's rocm_configure); "" for none.
        docs/porting.md, "Using XLA/JAX BUILD files unchanged".
      rocm_sysroots: {sysroot name: repository name} of sysroots declared
        with rocm_sysroot_repository, selectable with
        --@rules_rocm//rocm:sysroot=<name>; `debian11` is always there.
      python_interpreters: removed; giving it fails naming the replacement.
    """
    if python_interpreters != None:
        fail("rules_rocm_dependencies(python_interpreters = ...) is gone: register the interpreters " +
             "as rules_python toolchains (local_runtime_repo + local_runtime_toolchains_repo) and " +
             "list their versions in python_versions; docs/python.md, \"Migrating\"")
    check_python_versions(python_versions, "rules_rocm_dependencies(python_versions = ...)")
    if not native.existing_rule("rocm_wheel_tools"):
        rocm_wheel_prebuilt_repository(name = "rocm_wheel_tools", path = rocm_wheel)
    if not native.existing_rule("rocm_python"):
        rocm_python_versions_repository(name = "rocm_python", versions = python_versions, declared_in = "rules_rocm_dependencies(python_versions = ...)")
    if not native.existing_rule("rocm_hip"):
        # The `local` toolkit: ROCm from $ROCM_PATH, /opt/rocm or /usr.
        rocm_hip_repository(name = "rocm_hip")
    toolkits = dict(rocm_toolkits)
    toolkits[LOCAL_TOOLKIT] = "rocm_hip"
    if not native.existing_rule("rocm_toolkits"):
        rocm_toolkits_repository(name = "rocm_toolkits", toolkits = toolkits, default = default_toolkit)
    sysroots = dict(rocm_sysroots)
    sysroots[DEBIAN11_SYSROOT] = "rocm_sysroot_" + DEBIAN11_SYSROOT
    if not native.existing_rule(sysroots[DEBIAN11_SYSROOT]):
        _rocm_sysroot_repository(name = sysroots[DEBIAN11_SYSROOT], sysroot = DEBIAN11_SYSROOT, debs = DEBIAN11_DEBS, glibc_floor = DEBIAN11_GLIBC_FLOOR)
    if not native.existing_rule("rocm_sysroots"):
        rocm_sysroots_repository(name = "rocm_sysroots", sysroots = sysroots)
    if local_config_rocm and not native.existing_rule(local_config_rocm):
        if default_toolkit not in toolkits:
            fail("rules_rocm_dependencies(default_toolkit = \"{}\") names no toolkit; declared: {}".format(default_toolkit, ", ".join(sorted(toolkits))))
        local_config_rocm_repository(name = local_config_rocm, default_toolkit_repository = toolkits[default_toolkit])

def rules_rocm_toolchains():
    """Registers the default toolchains (the prebuilt rocm-wheel, one HIP toolchain per toolkit, one C++ toolchain per sysroot); Python's are rules_python's."""
    native.register_toolchains("@rocm_wheel_tools//:toolchain")
    native.register_toolchains("@rocm_toolkits//:all")
    native.register_toolchains("@rocm_sysroots//:all")

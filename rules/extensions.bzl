"""Bzlmod (Bazel >= 7) module extension: the same repositories as WORKSPACE's
rules_rocm_dependencies(), plus declared ROCm toolkits. Tested on Bazel 7.7.1.

    rocm = use_extension("@rules_rocm//rules:extensions.bzl", "rules_rocm")
    rocm.toolkit(
        name = "therock_7_2",
        urls = ["https://.../therock-dist-linux-gfx120X-all-7.2.0.tar.gz"],
        sha256 = "...",
    )

then `--@rules_rocm//rocm:toolkit=therock_7_2` (docs/toolkits.md).

The rocm-wheel tool comes prebuilt (a release wheel, pinned by sha256;
docs/releasing.md); from a mirror, or a binary built here:

    rocm.prebuilt_tool(urls = ["https://mirror/rocm_wheel-0.1.0-py3-none-manylinux_2_17_x86_64.whl"], sha256 = "...")
    rocm.prebuilt_tool(path = "/abs/path/rocm-wheel")

XLA's and JAX's BUILD files name `@local_config_rocm`; the extension's
`rocm_local_config` repository holds those names over rules_rocm's toolkit:

    use_repo(rocm, local_config_rocm = "rocm_local_config")

(docs/porting.md, "Using XLA/JAX BUILD files unchanged").
"""

load("//rules/private/data:rocm_wheel_release.bzl", "ROCM_WHEEL_RELEASE")
load("//rules/private/repositories:hip_repository.bzl", "rocm_archive_toolkit_repository", "rocm_hip_repository", "rocm_path_toolkit_repository", "rocm_pip_sdk_toolkit_repository")
load("//rules/private/repositories:local_config_rocm_repository.bzl", "local_config_rocm_repository")
load("//rules/private/repositories:python_versions_repository.bzl", "rocm_python_versions_repository")
load("//rules/private/repositories:rocm_wheel_prebuilt_repository.bzl", "PREBUILT_TOOL_TAG", "declare_prebuilt_tool")
load("//rules/private/repositories:sysroot_hub.bzl", "SYSROOT_TAG", "declare_sysroots", "rocm_sysroots_repository")
load("//rules/private/repositories:sysroot_repository.bzl", "rocm_sysroot_repository")
load("//rules/private/repositories:toolkit_hub.bzl", "LOCAL_TOOLKIT", "TOOLKIT_TAG", "declare_toolkits", "rocm_toolkits_repository")
load("//rules/private/util:python_versions.bzl", "DEFAULT_PYTHON_VERSIONS", "check_python_versions")

def _python_versions(module_ctx):
    """The root module's rules_rocm.python_versions, else the default list."""
    for mod in module_ctx.modules:
        if mod.tags.python:
            fail(("rules_rocm.python(version = ..., interpreter = ...) in {} is gone: interpreters " +
                  "come from rules_python's toolchains (python.toolchain, or local_runtime_repo for " +
                  "an installed one); list the versions with rules_rocm.python_versions(versions = " +
                  "[...]). See docs/python.md, \"Migrating\".").format(mod.name))
    for mod in module_ctx.modules:
        tags = mod.tags.python_versions
        if not mod.is_root or not tags:
            continue
        if len(tags) > 1:
            fail("rules_rocm.python_versions is given {} times in MODULE.bazel; give it once".format(len(tags)))
        check_python_versions(tags[0].versions, "rules_rocm.python_versions in MODULE.bazel")
        return tags[0].versions, "rules_rocm.python_versions in MODULE.bazel"
    return DEFAULT_PYTHON_VERSIONS, "rules_rocm's default; set rules_rocm.python_versions in MODULE.bazel"

def _rules_rocm_impl(module_ctx):
    root_toolkits = []
    other_toolkits = []
    sysroots = []
    for mod in module_ctx.modules:
        (root_toolkits if mod.is_root else other_toolkits).extend(mod.tags.toolkit)
        sysroots.extend(mod.tags.sysroot)
    versions, declared_in = _python_versions(module_ctx)
    rocm_python_versions_repository(name = "rocm_python", versions = versions, declared_in = declared_in)
    rocm_hip_repository(name = "rocm_hip")
    declared = declare_toolkits(root_toolkits, other_toolkits, rocm_archive_toolkit_repository, rocm_path_toolkit_repository, rocm_pip_sdk_toolkit_repository)
    toolkits = dict(declared.toolkits)
    toolkits[LOCAL_TOOLKIT] = "rocm_hip"
    rocm_toolkits_repository(name = "rocm_toolkits", toolkits = toolkits, default = declared.default)
    declared_sysroots = declare_sysroots(sysroots, rocm_sysroot_repository)
    rocm_sysroots_repository(
        name = "rocm_sysroots",
        sysroots = declared_sysroots.sysroots,
        cross_sysroots = declared_sysroots.cross_sysroots,
        cross_arches = declared_sysroots.cross_arches,
    )

    declare_prebuilt_tool(
        [tag for mod in module_ctx.modules if mod.is_root for tag in mod.tags.prebuilt_tool],
        ROCM_WHEEL_RELEASE,
    )

    # XLA's @local_config_rocm names for BUILD files used unchanged; fetched
    # only by modules that use_repo it.
    local_config_rocm_repository(name = "rocm_local_config", default_toolkit_repository = toolkits[declared.default])

rules_rocm = module_extension(
    implementation = _rules_rocm_impl,
    tag_classes = {
        # Removed: interpreters come from rules_python; kept so that its use
        # fails with the migration message instead of "no such tag".
        "python": tag_class(
            attrs = {
                "interpreter": attr.string(),
                "version": attr.string(),
            },
            doc = "Removed (rules_python provides interpreters); fails naming the replacement.",
        ),
        "prebuilt_tool": PREBUILT_TOOL_TAG,
        "python_versions": tag_class(
            attrs = {"versions": attr.string_list(mandatory = True, doc = "Minor versions, e.g. [\"3.11\", \"3.12\"].")},
            doc = "The Python versions --//:python_versions=all builds (root module; default 3.11-3.14). Register a rules_python toolchain for each.",
        ),
        "sysroot": SYSROOT_TAG,
        "toolkit": TOOLKIT_TAG,
    },
)

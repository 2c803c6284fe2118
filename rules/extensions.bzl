"""Bzlmod (Bazel >= 7) module extension: the same repositories as WORKSPACE's
rules_rocm_dependencies(), plus declared ROCm toolkits. Tested on Bazel 7.7.1.

    rocm = use_extension("@rules_rocm//rules:extensions.bzl", "rules_rocm")
    rocm.toolkit(
        name = "therock_7_2",
        urls = ["https://.../therock-dist-linux-gfx120X-all-7.2.0.tar.gz"],
        sha256 = "...",
    )

then `--@rules_rocm//rocm:toolkit=therock_7_2` (docs/toolkits.md).
"""

load("//rules/private:hip_repository.bzl", "rocm_archive_toolkit_repository", "rocm_hip_repository", "rocm_path_toolkit_repository")
load("//rules/private:python_repository.bzl", "local_python_repository")
load("//rules/private:toolkits.bzl", "LOCAL_TOOLKIT", "TOOLKIT_TAG", "declare_toolkits", "rocm_toolkits_repository")

def _rules_rocm_impl(module_ctx):
    interpreters = {}
    root_toolkits = []
    other_toolkits = []
    for mod in module_ctx.modules:
        for p in mod.tags.python:
            interpreters[p.version] = p.interpreter
        (root_toolkits if mod.is_root else other_toolkits).extend(mod.tags.toolkit)
    local_python_repository(name = "rocm_python", interpreters = interpreters)
    rocm_hip_repository(name = "rocm_hip")
    declared = declare_toolkits(root_toolkits, other_toolkits, rocm_archive_toolkit_repository, rocm_path_toolkit_repository)
    toolkits = dict(declared.toolkits)
    toolkits[LOCAL_TOOLKIT] = "rocm_hip"
    rocm_toolkits_repository(name = "rocm_toolkits", toolkits = toolkits, default = declared.default)

rules_rocm = module_extension(
    implementation = _rules_rocm_impl,
    tag_classes = {
        "python": tag_class(attrs = {
            "interpreter": attr.string(mandatory = True),
            "version": attr.string(mandatory = True),
        }),
        "toolkit": TOOLKIT_TAG,
    },
)

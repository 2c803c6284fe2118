"""Bzlmod (Bazel >= 7) module extension: the same repositories as WORKSPACE's
rules_rocm_dependencies(). Tested on Bazel 7.7.1."""

load("//rules/private:hip_repository.bzl", "rocm_hip_repository")
load("//rules/private:python_repository.bzl", "local_python_repository")

def _rules_rocm_impl(module_ctx):
    interpreters = {}
    for mod in module_ctx.modules:
        for p in mod.tags.python:
            interpreters[p.version] = p.interpreter
    local_python_repository(name = "rocm_python", interpreters = interpreters)
    rocm_hip_repository(name = "rocm_hip")

rules_rocm = module_extension(
    implementation = _rules_rocm_impl,
    tag_classes = {
        "python": tag_class(attrs = {
            "interpreter": attr.string(mandatory = True),
            "version": attr.string(mandatory = True),
        }),
    },
)

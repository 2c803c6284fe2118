"""Analysis tests of python_extension: Python-independent static deps and the exported symbols.

A library reached through both `deps` and `python_independent_deps` is
linked from its Python-independent configuration only (so it compiles once
for every Python version), and the module's version script exports
PyInit_<module> alone.
"""

load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts")
load("@rules_cc//cc:defs.bzl", "cc_library")
load("//rules:defs.bzl", "python_extension")

def _archives(action, prefix):
    return [f for f in action.inputs.to_list() if f.basename.startswith(prefix) and f.basename.endswith(".a")]

def _independent_deps_test_impl(ctx):
    env = analysistest.begin(ctx)
    target = analysistest.target_under_test(env)
    links = [a for a in target.actions if a.mnemonic == "CppLink"]
    asserts.equals(env, 1, len(links), "one link action")
    if not links:
        return analysistest.end(env)
    link = links[0]
    own_root = link.outputs.to_list()[0].root.path
    per_python = _archives(link, "lib" + ctx.attr.prefix + "_per_python")
    independent = _archives(link, "lib" + ctx.attr.prefix + "_independent")
    common = _archives(link, "lib" + ctx.attr.prefix + "_common")
    asserts.equals(env, [own_root], [f.root.path for f in per_python], "deps are built in the module's (per-Python) configuration")
    asserts.equals(env, 1, len(independent), "python_independent_deps linked: " + str(independent))
    asserts.equals(env, 1, len(common), "a library both lists reach is linked once, got " + str(common))
    for f in independent + common:
        asserts.true(env, f.root.path != own_root, "{} is built in the Python-independent configuration, not {}".format(f.path, own_root))
    scripts = [arg for arg in link.argv if arg.startswith("-Wl,--version-script=")]
    asserts.equals(env, 1, len(scripts), "a version script on the link line")
    writes = [a for a in target.actions if a.mnemonic == "FileWrite" and a.outputs.to_list()[0].basename.endswith(".exports.lds")]
    asserts.equals(env, 1, len(writes), "the version script is written")
    for w in writes:
        asserts.equals(env, "{\n  global: PyInit__two;\n  local: *;\n};\n", w.content, "only PyInit_<module> is global")
    return analysistest.end(env)

_independent_deps_test = analysistest.make(_independent_deps_test_impl, attrs = {"prefix": attr.string()})

def python_extension_analysis_tests(name):
    """Fixtures (manual) and tests; `name` is the test_suite and the fixtures' prefix."""
    cc_library(name = name + "_common", srcs = ["python_fixture/common.c"], tags = ["manual"])
    cc_library(name = name + "_per_python", srcs = ["python_fixture/per_python.c"], deps = [name + "_common"], tags = ["manual"])
    cc_library(name = name + "_independent", srcs = ["python_fixture/independent.c"], deps = [name + "_common"], tags = ["manual"])
    python_extension(
        name = name + "_two",
        module_name = "_two",
        srcs = ["python_fixture/two.c"],
        deps = [name + "_per_python"],
        python_independent_deps = [name + "_independent"],
        tags = ["manual"],
    )
    _independent_deps_test(name = name + "_independent_deps_test", target_under_test = name + "_two", prefix = name)
    native.test_suite(name = name, tests = [name + "_independent_deps_test"])

"""Analysis test: what does not depend on Python is built once for all versions.

Reads the link actions of every kernel module of every Python version the
wheels are built for (an aspect along actual -> per_python -> srcs) and
checks, from the archives they link:
- abseil's archives and the HIP kernel libraries' archives come from one
  configuration, the same for every module and version, and not a
  per-Python one: their compiles (and the HIP device compiles behind the
  kernel archives) run once;
- nanobind's archive comes from the module's own (per-Python)
  configuration: the check can tell the two apart.
The execution log of a real build checks the same from the other side
(exec_log_test.sh).
"""

load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts")
load("//rules:defs.bzl", "PythonExtensionInfo")

_LinksInfo = provider(doc = "Test only.", fields = {"links": "list of (module, version, CppLink Action)"})

def _links_impl(target, ctx):
    links = []
    if PythonExtensionInfo in target:
        info = target[PythonExtensionInfo]
        links = [(info.module, info.python.version, a) for a in target.actions if a.mnemonic == "CppLink"]
    for attr in ("actual", "per_python", "srcs"):
        for dep in getattr(ctx.rule.attr, attr, None) or []:
            if _LinksInfo in dep:
                links.extend(dep[_LinksInfo].links)
    return [_LinksInfo(links = links)]

_links = aspect(implementation = _links_impl, attr_aspects = ["actual", "per_python", "srcs"])

def _roots(action, needle):
    # .lo: alwayslink archives (hip_library's).
    return {f.root.path: True for f in action.inputs.to_list() if f.extension in ("a", "lo") and needle in f.path}

def _once_test_impl(ctx):
    env = analysistest.begin(ctx)
    links = analysistest.target_under_test(env)[_LinksInfo].links
    versions = sorted({v: True for _, v, _ in links}.keys())
    modules = sorted({m: True for m, _, _ in links}.keys())
    asserts.equals(env, ctx.attr.versions, versions, "Python versions linked")
    asserts.equals(env, ctx.attr.modules, modules, "modules linked")
    asserts.equals(env, len(versions) * len(modules), len(links), "one link per module and version")
    shared = {}
    for module, version, action in links:
        own = action.outputs.to_list()[0].root.path
        for needle in ctx.attr.once:
            roots = _roots(action, needle)
            if needle in ctx.attr.required_once.get(module, []):
                asserts.true(env, roots, "{} ({}) links no archive of {}".format(module, version, needle))
            asserts.false(env, own in roots, "{} ({}) links {} built for its Python version".format(module, version, needle))
            shared.update(roots)
        nanobind = _roots(action, ctx.attr.per_python)
        asserts.equals(env, [own], nanobind.keys(), "{} ({}): {} from its own configuration".format(module, version, ctx.attr.per_python))
    asserts.equals(env, 1, len(shared), "Python-independent archives come from one configuration, got " + str(shared.keys()))
    return analysistest.end(env)

once_test = analysistest.make(
    _once_test_impl,
    attrs = {
        "modules": attr.string_list(doc = "Every module name."),
        "once": attr.string_list(doc = "Path parts of archives that must be Python-independent."),
        "per_python": attr.string(doc = "Path part of an archive every module links per version."),
        "required_once": attr.string_list_dict(doc = "module -> entries of `once` it must link."),
        "versions": attr.string_list(doc = "Python versions of the wheels."),
    },
    extra_target_under_test_aspects = [_links],
)

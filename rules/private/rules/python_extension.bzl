"""python_extension: a CPython extension module for the configuration's Python.

Compiled against the headers of the rules_python toolchain the
configuration's python_version selects (`current_py_cc_headers`) and named
`<module><EXT_SUFFIX>`. Shared libraries
that do not depend on Python (`shared_libs`) are reached through the reset
transition, so every Python version links the same, once-built library; the
module finds them at run time through `runpath` ($ORIGIN-relative), never
through the build tree. Static libraries that do not depend on Python
(`python_independent_deps`: HIP kernels, abseil) take the same transition
and are linked into every version's module, compiled once. A version script
exports `PyInit_<module>` alone: the static code linked in (abseil,
nanobind, a NumPy API table) stays private to the module.

The rule checks its attributes and coordinates; the compile, link and
symlink actions are in rules/private/actions/python_extension.bzl.
"""

load("//rules/private:providers.bzl", "PythonExtensionInfo")
load(
    "//rules/private/actions:python_extension.bzl",
    "extension_cc_setup",
    "extension_compile",
    "extension_link",
    "extension_module",
    "extension_version_script",
)
load("//rules/private/settings:transitions.bzl", "ALLOWLIST_ATTRS", "python_reset_transition")
load(
    ":python_toolchain.bzl",
    "per_python_compatible_with",
    "python_facts",
    "python_toolchain_attrs",
    "python_toolchains",
)

# Bazel >= 8 users get this from @rules_cc; on Bazel 7 it is a global.
_CcInfo = CcInfo  # buildifier: disable=native-cc-info

def _shared_lib_files(targets, owner):
    libs = []
    for t in targets:
        files = [f for f in t[DefaultInfo].files.to_list() if f.basename.endswith(".so") or ".so." in f.basename]

        # An entry without a .so may carry just the headers (CcInfo), e.g. the
        # cc_library a shared library is linked from.
        if not files and _CcInfo not in t:
            fail("{}: shared_libs entry {} provides neither a .so file nor headers (CcInfo)".format(owner, t.label))
        libs.extend(files)
    return libs

def _validate_runpath(entries, owner):
    for r in entries:
        if not r.startswith("$ORIGIN"):
            fail(("{}: runpath entry '{}' must start with $ORIGIN: an installed wheel can only " +
                  "find libraries relative to itself").format(owner, r))

def _module_name(ctx):
    module = ctx.attr.module_name or ctx.label.name
    if "." in module or "/" in module:
        fail("{}: module_name '{}' must be a bare module name (the package comes from the wheel layout)".format(ctx.label, module))
    return module

def _python_extension_impl(ctx):
    py = python_facts(ctx)
    module = _module_name(ctx)
    cc = extension_cc_setup(ctx)
    shared_libs = _shared_lib_files(ctx.attr.shared_libs, ctx.label)
    _validate_runpath(ctx.attr.runpath, ctx.label)
    objects = extension_compile(ctx, cc, py)
    linked = extension_link(ctx, cc, objects, shared_libs, extension_version_script(ctx, module))
    out = extension_module(ctx, module, py.ext_suffix, linked)
    return [
        DefaultInfo(files = depset([out])),
        PythonExtensionInfo(
            module = module,
            file = out,
            python = py,
            shared_libs = depset(shared_libs),
        ),
    ]

_python_extension = rule(
    implementation = _python_extension_impl,
    attrs = dict(
        python_toolchain_attrs(),
        copts = attr.string_list(doc = "Extra compiler flags."),
        defines = attr.string_list(doc = "Preprocessor defines (-D)."),
        deps = attr.label_list(
            providers = [_CcInfo],
            doc = "cc_library deps, built for this Python version (header-only or static code).",
        ),
        hdrs = attr.label_list(
            allow_files = [".h", ".hh", ".hpp", ".inc"],
            doc = "Private headers of srcs (not seen by dependents).",
        ),
        linkopts = attr.string_list(doc = "Extra linker flags."),
        module_name = attr.string(doc = "Module name; default: the target name."),
        python_independent_deps = attr.label_list(
            providers = [_CcInfo],
            cfg = python_reset_transition,
            doc = "cc_library / hip_library deps that do not depend on Python (HIP kernels, abseil): " +
                  "configured once for every Python version and linked statically into the module.",
        ),
        runpath = attr.string_list(
            doc = "DT_RUNPATH entries, each starting with $ORIGIN (where shared_libs sit in the installed wheel).",
        ),
        shared_libs = attr.label_list(
            allow_files = True,
            cfg = python_reset_transition,
            doc = "Python-independent shared libraries (cc_binary linkshared, HIP libraries) and " +
                  "cc_library targets for their headers, configured once for every Python version.",
        ),
        srcs = attr.label_list(
            allow_files = [".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp"],
            mandatory = True,
            doc = "C/C++ sources of the module, compiled against the configuration's Python headers.",
        ),
        _cc_toolchain = attr.label(
            default = "@bazel_tools//tools/cpp:current_cc_toolchain",
            doc = "The C++ toolchain (find_cpp_toolchain falls back to it without toolchain resolution).",
        ),
        **ALLOWLIST_ATTRS
    ),
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"] + python_toolchains(),
    fragments = ["cpp"],
    doc = "A CPython extension module for the configuration's Python version.",
)

def python_extension(name, **kwargs):
    """A CPython extension module `<name><EXT_SUFFIX>` for the configuration's Python.

    Built for the configuration's Python version: per version through
    python_wheels (//:wheels) or rules_python's py_test(python_version = ...),
    rules_python's default version at the top level.

    Args:
      name: target name, also the module name unless module_name is given.
      **kwargs: see the rule's attributes.
    """
    if "target_compatible_with" not in kwargs:
        kwargs["target_compatible_with"] = per_python_compatible_with()
    _python_extension(name = name, **kwargs)

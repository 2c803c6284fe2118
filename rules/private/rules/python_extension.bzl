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
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")
load("//rules/private:providers.bzl", "PythonExtensionInfo")
load("//rules/private/settings:transitions.bzl", "ALLOWLIST_ATTRS", "python_reset_transition")
load(
    ":python_toolchain.bzl",
    "per_python_compatible_with",
    "python_facts",
    "python_toolchain_attrs",
    "python_toolchains",
)

# Bazel >= 8 users get these from @rules_cc; on Bazel 7 they are globals.
_CcInfo = CcInfo  # buildifier: disable=native-cc-info
_cc_common = cc_common  # buildifier: disable=native-cc-common

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

def _cc_setup(ctx):
    """The C++ toolchain and its features (position-independent code always)."""
    cc_toolchain = find_cpp_toolchain(ctx)
    features = _cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features + ["pic"],
        unsupported_features = ctx.disabled_features,
    )
    return struct(toolchain = cc_toolchain, features = features)

def _compile(ctx, cc, py):
    """Compiles srcs against the selected interpreter's headers (its ABI); returns the outputs."""
    compilation_contexts = [py.headers.compilation_context]
    for d in ctx.attr.deps + ctx.attr.python_independent_deps + ctx.attr.shared_libs:
        if _CcInfo in d:
            compilation_contexts.append(d[_CcInfo].compilation_context)
    _, outputs = _cc_common.compile(
        name = ctx.label.name,
        actions = ctx.actions,
        feature_configuration = cc.features,
        cc_toolchain = cc.toolchain,
        srcs = ctx.files.srcs,
        private_hdrs = ctx.files.hdrs,
        compilation_contexts = compilation_contexts,
        user_compile_flags = ["-fvisibility=hidden"] + ctx.attr.copts,
        defines = ctx.attr.defines,
    )
    return outputs

def _link_flags(runpath, shared_libs, linkopts):
    """The module's linker flags: RUNPATH entries, then shared_libs by file name.

    Python-independent libraries are linked by file name (-l:), so DT_NEEDED
    is their SONAME or base name, never a build-tree path.
    """
    link_flags = ["-Wl,--enable-new-dtags"]
    for r in runpath:
        link_flags.append("-Wl,-rpath," + r)
    lib_dirs = []
    for f in shared_libs:
        if f.dirname not in lib_dirs:
            lib_dirs.append(f.dirname)
    link_flags += ["-L" + d for d in lib_dirs]
    link_flags += ["-l:" + f.basename for f in shared_libs]
    return link_flags + linkopts

def _linking_contexts(ctx):
    """deps' and python_independent_deps' linking contexts, each library once.

    A library both lists reach (abseil under a per-Python helper and under
    the kernels) is linked from its Python-independent build only, so its
    per-Python copy is never compiled. python_independent_deps' contexts go
    to the link as they are (cc_common.link orders every library after its
    users); per-Python deps' inputs, filtered, come first.
    """
    independent = [d[_CcInfo].linking_context for d in ctx.attr.python_independent_deps]
    owners = {}
    for c in independent:
        for i in c.linker_inputs.to_list():
            owners[str(i.owner)] = True
    per_python = depset(
        order = "topological",
        transitive = [d[_CcInfo].linking_context.linker_inputs for d in ctx.attr.deps],
    ).to_list()
    kept = [i for i in per_python if str(i.owner) not in owners]
    return [_cc_common.create_linking_context(linker_inputs = depset(kept, order = "topological"))] + independent

def _version_script(ctx, module):
    """A linker version script exporting PyInit_<module> only."""
    script = ctx.actions.declare_file(ctx.label.name + ".exports.lds")
    ctx.actions.write(script, "{\n  global: PyInit_%s;\n  local: *;\n};\n" % module)
    return script

def _link(ctx, cc, compilation_outputs, shared_libs, exports):
    """Links the module as a shared library; returns the linked File."""
    linking = _cc_common.link(
        name = ctx.label.name,
        actions = ctx.actions,
        feature_configuration = cc.features,
        cc_toolchain = cc.toolchain,
        compilation_outputs = compilation_outputs,
        linking_contexts = _linking_contexts(ctx),
        user_link_flags = _link_flags(ctx.attr.runpath, shared_libs, ctx.attr.linkopts) +
                          ["-Wl,--version-script=" + exports.path],
        additional_inputs = shared_libs + [exports],
        output_type = "dynamic_library",
        link_deps_statically = True,
    )
    return linking.library_to_link.resolved_symlink_dynamic_library or linking.library_to_link.dynamic_library

def _python_extension_impl(ctx):
    py = python_facts(ctx)
    module = _module_name(ctx)
    cc = _cc_setup(ctx)
    shared_libs = _shared_lib_files(ctx.attr.shared_libs, ctx.label)
    _validate_runpath(ctx.attr.runpath, ctx.label)
    linked = _link(ctx, cc, _compile(ctx, cc, py), shared_libs, _version_script(ctx, module))

    # cc_common.link names its output lib<name>.so; the import system needs
    # <module><EXT_SUFFIX>.
    out = ctx.actions.declare_file(module + py.ext_suffix)
    ctx.actions.symlink(output = out, target_file = linked)
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

"""The actions of python_extension (rules/private/rules/python_extension.bzl).

The module is compiled against the configuration's Python headers with
hidden visibility, linked as a shared library whose version script exports
`PyInit_<module>` alone, with Python-independent shared libraries reached
by file name and RUNPATH, and symlinked to `<module><EXT_SUFFIX>`.
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")

# Bazel >= 8 users get these from @rules_cc; on Bazel 7 they are globals.
_CcInfo = CcInfo  # buildifier: disable=native-cc-info
_cc_common = cc_common  # buildifier: disable=native-cc-common

def extension_cc_setup(ctx):
    """The C++ toolchain and its features (position-independent code always)."""
    cc_toolchain = find_cpp_toolchain(ctx)
    features = _cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features + ["pic"],
        unsupported_features = ctx.disabled_features,
    )
    return struct(toolchain = cc_toolchain, features = features)

def extension_compile(ctx, cc, py):
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

def extension_version_script(ctx, module):
    """A linker version script exporting PyInit_<module> only."""
    script = ctx.actions.declare_file(ctx.label.name + ".exports.lds")
    ctx.actions.write(script, "{\n  global: PyInit_%s;\n  local: *;\n};\n" % module)
    return script

def extension_link(ctx, cc, compilation_outputs, shared_libs, exports):
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

def extension_module(ctx, module, ext_suffix, linked):
    """`<module><EXT_SUFFIX>`, the name the import system needs, for the linked library.

    cc_common.link names its output lib<name>.so.
    """
    out = ctx.actions.declare_file(module + ext_suffix)
    ctx.actions.symlink(output = out, target_file = linked)
    return out

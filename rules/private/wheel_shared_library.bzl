"""wheel_shared_library: a shared library with the RUNPATH it needs inside a wheel.

The library is Python-independent: the reset transition configures it once,
and every Python version's wheel copies that one file.
"""

load(":toolchain.bzl", "ROCM_WHEEL_TOOLCHAIN_TYPE", "rocm_wheel_tool")
load(":transitions.bzl", "ALLOWLIST_ATTRS", "python_reset_transition")

def _rpath_arguments(lib, runpath, out):
    """`rocm-wheel rpath` arguments: set the RUNPATH, or remove it when empty."""
    if runpath:
        return ["rpath", "set", lib.path, "--rpath", ":".join(runpath), "--output", out.path]
    return ["rpath", "remove", lib.path, "--output", out.path]

def _wheel_shared_library_impl(ctx):
    lib = ctx.file.lib
    out = ctx.actions.declare_file(ctx.label.name + "/" + lib.basename)
    ctx.actions.run(
        executable = rocm_wheel_tool(ctx),
        arguments = _rpath_arguments(lib, ctx.attr.runpath, out),
        inputs = [lib],
        outputs = [out],
        mnemonic = "RocmWheelRpath",
        progress_message = "Setting the RUNPATH of %s for its wheel" % out.short_path,
    )
    return [DefaultInfo(files = depset([out]))]

wheel_shared_library = rule(
    implementation = _wheel_shared_library_impl,
    attrs = dict(
        lib = attr.label(
            allow_single_file = [".so"],
            mandatory = True,
            cfg = python_reset_transition,
            doc = "A Python-independent shared library (configured once for all Python versions).",
        ),
        runpath = attr.string_list(doc = "New DT_RUNPATH entries ($ORIGIN-relative); empty removes it."),
        **ALLOWLIST_ATTRS
    ),
    cfg = python_reset_transition,
    toolchains = [str(ROCM_WHEEL_TOOLCHAIN_TYPE)],
    doc = "A copy of a shared library with the RUNPATH it needs at its place inside a wheel " +
          "(`<name>/<basename>`), rewritten by `rocm-wheel rpath`.",
)

"""wheel_shared_library: a shared library with the RUNPATH it needs inside a wheel.

The library is Python-independent: the reset transition configures it once,
and every Python version's wheel copies that one file.
"""

load("//rules/private:providers.bzl", "GfxInfo")
load("//rules/private/actions:rocm_wheel.bzl", "rocm_wheel_rocm_runpath", "rocm_wheel_rpath")
load("//rules/private/data:gfx_families.bzl", "therock_families")
load("//rules/private/settings:transitions.bzl", "ALLOWLIST_ATTRS", "python_reset_transition")
load(":rocm_wheel_toolchain.bzl", "ROCM_WHEEL_TOOLCHAIN_TYPE")

def _wheel_shared_library_impl(ctx):
    lib = ctx.file.lib
    out = ctx.actions.declare_file(ctx.label.name + "/" + lib.basename)
    if ctx.attr.install_dir:
        # Configured once for every Python version's wheel: the ROCm entries
        # are set here, where the wheel rules leave the file as it is.
        families = therock_families(ctx.attr._gfx[GfxInfo].value)
        rocm_wheel_rocm_runpath(ctx, lib, ctx.attr.install_dir, families, out, base = ctx.attr.runpath)
    else:
        rocm_wheel_rpath(ctx, lib, ctx.attr.runpath, out)
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
        install_dir = attr.string(doc = "Its directory in the installed wheel, relative to site-packages (`my_plugin/lib`): " +
                                        "RUNPATH then also finds the ROCm libraries it needs (as rocm_wheel's `rocm_runpath`)."),
        runpath = attr.string_list(doc = "New DT_RUNPATH entries ($ORIGIN-relative); empty removes it."),
        _gfx = attr.label(default = Label("//:gfx"), providers = [GfxInfo]),
        **ALLOWLIST_ATTRS
    ),
    cfg = python_reset_transition,
    toolchains = [str(ROCM_WHEEL_TOOLCHAIN_TYPE)],
    doc = "A copy of a shared library with the RUNPATH it needs at its place inside a wheel " +
          "(`<name>/<basename>`), rewritten by `rocm-wheel rpath`.",
)

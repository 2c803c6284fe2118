"""rocm_sysroot: the facts of a sysroot that HIP compiles and wheel rules need.

Made by rocm_sysroot_repository (repositories/sysroot_repository.bzl); the selected one
is `@rules_rocm//rocm:selected_sysroot` (--@rules_rocm//rocm:sysroot).
"""

load("//rules/private:providers.bzl", "SysrootInfo")

def _rocm_sysroot_impl(ctx):
    path = ctx.label.workspace_root + "/" + ctx.attr.root
    return [SysrootInfo(
        name = ctx.attr.sysroot,
        path = path,
        glibc_version = ctx.attr.glibc_version,
        compile_flags = ["--sysroot=" + path, "--gcc-toolchain={}/usr".format(path)] + ctx.attr.floor_flags,
        compile_files = depset(ctx.files.compile_files),
        files = depset(ctx.files.files),
    )]

rocm_sysroot = rule(
    implementation = _rocm_sysroot_impl,
    attrs = {
        "compile_files": attr.label(allow_files = True, doc = "Headers and gcc's directory: what a compile reads."),
        "files": attr.label(allow_files = True, doc = "Every file of the sysroot: what a link reads."),
        "floor_flags": attr.string_list(doc = "Flags binding functions to the versions of the sysroot's glibc_floor (-include of its generated header), or none."),
        "gcc_version": attr.string(doc = "The libstdc++ (gcc) version the sysroot holds."),
        "glibc_version": attr.string(mandatory = True, doc = "major.minor of the sysroot's glibc."),
        "root": attr.string(mandatory = True, doc = "The sysroot's directory in its repository."),
        "sysroot": attr.string(mandatory = True, doc = "The sysroot's name."),
    },
    provides = [SysrootInfo],
    doc = "A sysroot in a repository (rocm.sysroot in MODULE.bazel).",
)

def _no_sysroot_impl(_ctx):
    return [SysrootInfo(
        name = "host",
        path = "",
        glibc_version = "",
        compile_flags = [],
        compile_files = depset(),
        files = depset(),
    )]

rocm_no_sysroot = rule(
    implementation = _no_sysroot_impl,
    provides = [SysrootInfo],
    doc = "No sysroot: the building machine's C++ toolchain and headers (--@rules_rocm//rocm:sysroot=host).",
)

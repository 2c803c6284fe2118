"""rocm_library: a ROCm library (rocPRIM, hipBLAS, MIOpen, ...) as a hip_library or cc_library dependency.

Made by the HIP repository rule (`@rocm_hip//:rocprim`, re-exported as
`@rules_rocm//rocm:rocprim`). It carries the version found and the gfx
targets that version refuses, so hip_library can check the --//:gfx set at
analysis time instead of failing deep inside a device compile, and the
include directory and link flags C++ users need. A library missing from the
installation fails the analysis of whatever uses it, naming the package.
"""

load("//rules/private:providers.bzl", "RocmLibraryInfo")
load("//rules/private/data:rocm_library_table.bzl", "HIP_PLATFORM_DEFINE")
load(":hip_toolchain.bzl", "toolkit_path")

# The globals rules_cc re-exports (rules_cc 0.0.11 has no cc/common yet).
_CcInfo = CcInfo  # buildifier: disable=native-cc-info
_cc_common = cc_common  # buildifier: disable=native-cc-common

def _rocm_library_impl(ctx):
    if ctx.attr.unavailable:
        fail("{}: {}".format(ctx.attr.display_name, ctx.attr.unavailable))
    refused = dict(ctx.attr.refused)
    for dep in ctx.attr.deps:
        info = dep[RocmLibraryInfo]
        for t, why in info.refused.items():
            refused.setdefault(t, "{} {}: {}".format(info.name, info.version, why))
    includes = [toolkit_path(ctx, ctx.attr.include_dir)] if ctx.attr.include_dir else []
    return [
        RocmLibraryInfo(
            name = ctx.attr.display_name,
            version = ctx.attr.version,
            rocm_version = ctx.attr.rocm_version,
            refused = refused,
            unavailable = ctx.attr.unavailable,
        ),
        # Headers live in the ROCm installation; a non-/usr root must be on
        # the include path of plain C++ users too. HIP's headers need the
        # platform macro that clang -x hip defines itself (hip_common.h
        # defines it only under clang): g++ and plain clang++ users get it
        # here; in HIP compiles it is the same definition.
        _cc_common.merge_cc_infos(
            direct_cc_infos = [_CcInfo(
                compilation_context = _cc_common.create_compilation_context(
                    system_includes = depset(includes),
                    headers = depset(ctx.files.hdrs),
                    defines = depset([HIP_PLATFORM_DEFINE]),
                ),
                linking_context = _linking_context(ctx),
            )],
            cc_infos = [d[_CcInfo] for d in ctx.attr.deps],
        ),
    ]

def _linking_context(ctx):
    if not ctx.attr.link:
        return _cc_common.create_linking_context(linker_inputs = depset())
    return _cc_common.create_linking_context(linker_inputs = depset([_cc_common.create_linker_input(
        owner = ctx.label,
        # By path, not -L/-l: a -L of /usr/lib/<triple> would put the building
        # machine's libc and libstdc++ ahead of a sysroot's.
        user_link_flags = depset(["{}/lib{}.so".format(toolkit_path(ctx, ctx.attr.lib_dir), ctx.attr.link)]),
        additional_inputs = depset(ctx.files.shared_libraries),
    )]))

rocm_library = rule(
    implementation = _rocm_library_impl,
    attrs = {
        "deps": attr.label_list(providers = [RocmLibraryInfo, _CcInfo], doc = "ROCm libraries this one is built on (their refusals, headers and libraries apply too)."),
        "display_name": attr.string(mandatory = True),
        "hdrs": attr.label_list(allow_files = True, doc = "Headers, for a toolkit in a repository (an installed ROCm's stay where they are)."),
        "in_repository": attr.bool(doc = "include_dir and lib_dir are relative to this target's repository."),
        "shared_libraries": attr.label_list(allow_files = True, doc = "The shared library files, for a toolkit in a repository."),
        "include_dir": attr.string(doc = "Absolute include directory for plain C++ users ('' for /usr/include)."),
        "lib_dir": attr.string(doc = "Directory of the shared library."),
        "link": attr.string(doc = "The shared library's name: -l<link> ('' for a header-only library)."),
        "refused": attr.string_dict(doc = "gfx target -> why this version cannot compile code for it."),
        "rocm_version": attr.string(),
        "unavailable": attr.string(doc = "Non-empty: the library is missing; reported when a target uses it."),
        "version": attr.string(),
    },
    provides = [RocmLibraryInfo, _CcInfo],
    doc = "A ROCm library found by rocm_toolkit_repository.",
)

"""hip_library: per-gfx device compiles, one bundle, one host compile, CcInfo.

The hip_library macro makes two targets:
- `<name>_device` (hip_device_code): built once per gfx target of --//:gfx,
  each in that target's own device configuration (the gfx_device_split
  transition), where it runs one device_compile per source;
- `<name>` (hip_library_rule): per source one host_compile (independent of
  the gfx set: never re-runs when it changes), one bundle of the device
  objects of every target, and one embed of that bundle into the host object.
The actions and the names of their outputs are in actions/hip_compile.bzl;
the rules here only decide which actions run.

The host objects form an alwayslink static library in CcInfo, so cc_binary,
cc_shared_library and cc_library link it like any C++ library; the HIP
runtime is linked with -lamdhip64 (no RUNPATH: the final binary sets it).
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")
load(
    ":actions/hip_compile.bzl",
    "bundle",
    "define_flags",
    "dependency_flags",
    "device_compile",
    "embed",
    "host_compile",
    "include_flags",
    "placeholder_bundle",
)
load(":gfx_families.bzl", "sort_gfx_targets")
load(":hip_toolchain.bzl", "HIP_TOOLCHAIN_TYPE", "hip_toolchain_info")
load(":labels.bzl", "label_as_typed")
load(":providers.bzl", "GfxInfo", "HipDeviceInfo", "HipInfo", "RocmLibraryInfo", "SettingInfo")
load(":toolchain.bzl", "ROCM_WHEEL_TOOLCHAIN_TYPE")
load(":transitions.bzl", "ALLOWLIST_ATTRS", "gfx_device_split")

# The globals rules_cc re-exports (rules_cc 0.0.11 has no cc/common yet).
_CcInfo = CcInfo  # buildifier: disable=native-cc-info
_cc_common = cc_common  # buildifier: disable=native-cc-common

_HDR_EXTS = [".h", ".hh", ".hpp", ".hxx", ".inc", ".cuh", ".inl"]
_SRC_EXTS = [".hip", ".cu", ".cc", ".cpp", ".cxx"]

def _library_name(ctx):
    # The device half is "<name>_device"; messages name the hip_library.
    name = ctx.label.name
    name = name[:-len("_device")] if name.endswith("_device") else name
    return label_as_typed(ctx.label, name)

def _refusal(ctx, hip, target):
    """Why `target` cannot be built ('' when it can)."""
    rocm = hip.compiler
    if target not in rocm.targets and not (ctx.attr.self_contained and target in rocm.nogpulib_targets):
        if target in rocm.nogpulib_targets:
            return ("{compiler} accepts {target} only with -nogpulib: {lib} has no oclc_isa_version file for it, " +
                    "so only code that needs no device library builds (self_contained = True)").format(
                compiler = rocm.name,
                target = target,
                lib = hip.device_lib_path,
            )
        return "{} does not know {} (it compiles {})".format(rocm.name, target, ", ".join(rocm.targets))
    for lib in ctx.attr.rocm_libs:
        info = lib[RocmLibraryInfo]
        if info.unavailable:
            fail("{}: {}".format(_library_name(ctx), info.unavailable))
        if target in info.refused:
            return "{} {} (ROCm {}) cannot compile device code for {}: {}".format(
                info.name,
                info.version,
                info.rocm_version,
                target,
                info.refused[target],
            )
    return ""

def _check_target(ctx, hip, target):
    """True if device code for `target` is built; False if it is left out; fails otherwise."""
    why = _refusal(ctx, hip, target)
    if not why:
        return True
    if ctx.attr.skip_unsupported_targets:
        # buildifier: disable=print
        print("WARNING: {}: no device code for {}: {}. skip_unsupported_targets = True leaves it out; GPUs of that target fail at launch (hipErrorNoBinaryForGpu).".format(_library_name(ctx), target, why))
        return False
    fail(("{label}: {why}.\nFix: drop {target} from --//:gfx (families and their targets: docs/gfx.md), " +
          "use a ROCm whose libraries support it (ROCM_PATH=...), " +
          "or set skip_unsupported_targets = True on {label} to build it without {target} code.").format(
        label = _library_name(ctx),
        why = why,
        target = target,
    ))

def _hip_device_code_impl(ctx):
    target = ctx.attr._device_target[SettingInfo].value
    if not target:
        fail("{}: device code is built through hip_library (it needs a gfx device configuration)".format(ctx.label))
    hip = hip_toolchain_info(ctx)
    if not hip.compiler or not _check_target(ctx, hip, target):
        return [HipDeviceInfo(target = target, objects = {}), DefaultInfo()]
    flags = include_flags(ctx) + define_flags(ctx.attr.defines) + ctx.attr.copts + ctx.attr.device_copts
    objects = {
        src.path: device_compile(ctx, hip, src, target, flags, ctx.files.hdrs)
        for src in ctx.files.srcs
    }
    return [
        HipDeviceInfo(target = target, objects = objects),
        DefaultInfo(files = depset(objects.values())),
    ]

_COMMON_ATTRS = {
    "copts": attr.string_list(doc = "Flags for every ROCm-clang compile (host and device)."),
    "defines": attr.string_list(doc = "Preprocessor defines (propagate to dependents)."),
    "device_copts": attr.string_list(doc = "Flags for device compiles only."),
    "hdrs": attr.label_list(allow_files = _HDR_EXTS, doc = "Headers for host and device code."),
    "includes": attr.string_list(doc = "Include directories relative to the package."),
    "self_contained": attr.bool(doc = "Device code needs no device library, so targets the compiler accepts only with -nogpulib build too."),
    "skip_unsupported_targets": attr.bool(doc = "Targets the compiler or a ROCm library dep cannot build get no device code (and a build warning) instead of an analysis error."),
    "rocm_libs": attr.label_list(providers = [RocmLibraryInfo], doc = "ROCm libraries the sources use (@rules_rocm//rocm:rocprim, ...): a target one of them refuses is an analysis error (or left out with skip_unsupported_targets)."),
    "srcs": attr.label_list(allow_files = _SRC_EXTS, doc = "HIP sources; each gets one bundle."),
}

hip_device_code = rule(
    implementation = _hip_device_code_impl,
    attrs = dict(_COMMON_ATTRS, **{
        "_device_target": attr.label(default = Label("//platforms/gfx:device_target")),
    }),
    toolchains = [str(HIP_TOOLCHAIN_TYPE)],
    doc = "Internal: the device half of hip_library, built once per gfx configuration.",
)

def _resolve_compression(ctx, hip):
    c = ctx.attr._compression[SettingInfo].value
    if c == "auto":
        # Compressed (CCOB) bundles are read by the HIP runtime from ROCm 6.2 on.
        parts = hip.rocm_version.split(".")
        if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit() and (int(parts[0]), int(parts[1])) >= (6, 2):
            return "zstd"
        return "none"
    return c

def _device_objects(ctx):
    """gfx target -> {source path: code object} over the device configurations that built code."""
    per_target = {}
    for dep in ctx.split_attr.device.values():
        info = dep[HipDeviceInfo]
        if info.objects:
            per_target[info.target] = info.objects
    return per_target

def _cc_info(ctx, hip, host_objects, cc_deps):
    """CcInfo of the host objects (an alwayslink static library) and the C++ deps."""
    cc_toolchain = find_cpp_toolchain(ctx)
    feature_configuration = _cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    compilation_context = _cc_common.create_compilation_context(
        headers = depset(ctx.files.hdrs),
        defines = depset(ctx.attr.defines),
    )
    compilation_outputs = _cc_common.create_compilation_outputs(
        objects = depset(host_objects),
        pic_objects = depset(host_objects),
    )
    linking_context, _ = _cc_common.create_linking_context_from_compilation_outputs(
        actions = ctx.actions,
        feature_configuration = feature_configuration,
        cc_toolchain = cc_toolchain,
        compilation_outputs = compilation_outputs,
        name = ctx.label.name,
        alwayslink = True,
        user_link_flags = ["-L" + hip.runtime_lib_dir, "-lamdhip64"],
        linking_contexts = [d[_CcInfo].linking_context for d in cc_deps],
        disallow_dynamic_library = True,
    )
    return _cc_common.merge_cc_infos(
        direct_cc_infos = [_CcInfo(compilation_context = compilation_context, linking_context = linking_context)],
        cc_infos = [d[_CcInfo] for d in cc_deps],
    )

def _hip_library_impl(ctx):
    hip = hip_toolchain_info(ctx)
    if not hip.compiler:
        fail("{}: the HIP toolchain has no ROCm clang for host code".format(ctx.label))
    per_target = _device_objects(ctx)
    targets = sort_gfx_targets(per_target.keys())
    compress = _resolve_compression(ctx, hip)

    cc_deps = ctx.attr.deps + ctx.attr.rocm_libs
    dep_ctx = _cc_common.merge_cc_infos(cc_infos = [d[_CcInfo] for d in cc_deps]).compilation_context
    host_flags = (include_flags(ctx) + dependency_flags(dep_ctx) +
                  define_flags(ctx.attr.defines + ctx.attr.local_defines) + ctx.attr.copts)
    placeholder = placeholder_bundle(ctx)
    host_objects = []
    bundles = []
    for src in ctx.files.srcs:
        entries = [(t, per_target[t][src.path]) for t in targets if src.path in per_target[t]]
        fatbin = bundle(ctx, hip, src, entries, compress)
        host = host_compile(ctx, hip, src, placeholder, host_flags, ctx.files.hdrs, dep_ctx.headers)
        host_objects.append(embed(ctx, hip, src, host, fatbin, len(entries)))
        bundles.append(fatbin)

    device_objects = {t: [per_target[t][k] for k in sorted(per_target[t].keys())] for t in targets}
    return [
        _cc_info(ctx, hip, host_objects, cc_deps),
        HipInfo(targets = targets, bundles = bundles, device_objects = device_objects),
        DefaultInfo(files = depset(host_objects)),
        OutputGroupInfo(
            bundles = depset(bundles),
            device_objects = depset([f for fs in device_objects.values() for f in fs]),
        ),
    ]

hip_library_rule = rule(
    implementation = _hip_library_impl,
    attrs = _COMMON_ATTRS | ALLOWLIST_ATTRS | {
        "deps": attr.label_list(providers = [_CcInfo], doc = "cc_library deps of the host code."),
        "device": attr.label(
            mandatory = True,
            cfg = gfx_device_split,
            providers = [HipDeviceInfo],
            doc = "The hip_device_code target (made by the hip_library macro).",
        ),
        "local_defines": attr.string_list(doc = "Defines for this library's host compile only."),
        "_cc_toolchain": attr.label(default = "@bazel_tools//tools/cpp:current_cc_toolchain"),
        "_compression": attr.label(default = Label("//:hip_bundle_compression"), providers = [SettingInfo]),
        # Validates --//:gfx (the split transition only expands it).
        "_gfx": attr.label(default = Label("//:gfx"), providers = [GfxInfo]),
    },
    # The C++ toolchain type too: find_cpp_toolchain resolves through it.
    toolchains = [str(HIP_TOOLCHAIN_TYPE), str(ROCM_WHEEL_TOOLCHAIN_TYPE), "@bazel_tools//tools/cpp:toolchain_type"],
    fragments = ["cpp"],
    doc = "Internal rule behind the hip_library macro.",
)

def hip_library(
        name,
        srcs,
        hdrs = [],
        deps = [],
        rocm_libs = [],
        copts = [],
        device_copts = [],
        defines = [],
        local_defines = [],
        includes = [],
        self_contained = False,
        skip_unsupported_targets = False,
        **kwargs):
    """A HIP library compiled for every gfx target of --//:gfx.

    Args:
      name: target name; provides _CcInfo (link it from cc_binary/cc_library) and HipInfo.
      srcs: .hip sources (host + device code, non-RDC: one bundle per source).
      hdrs: headers visible to host and device compiles.
      deps: cc_library deps of the host code.
      rocm_libs: ROCm libraries the sources use (@rules_rocm//rocm:rocprim,
        @rules_rocm//rocm:hipcub): a --//:gfx target the installed version
        refuses is an analysis error naming the library, or is left out with
        skip_unsupported_targets.
      copts: ROCm clang flags for host and device compiles.
      device_copts: flags for device compiles only.
      defines: defines for host and device, propagated to dependents.
      local_defines: defines for this library's host compile only.
      includes: include directories relative to the package.
      self_contained: device code needs no device library, so targets the
        compiler accepts only with -nogpulib (no ISA bitcode) build too.
      skip_unsupported_targets: targets the compiler or a rocm_libs entry
        cannot build get no device code and a build warning (a launch there
        fails with hipErrorNoBinaryForGpu) instead of an analysis error.
      **kwargs: visibility, tags, testonly, target_compatible_with, ...
    """

    # "manual": only meaningful under hip_library's split transition, so
    # keep it out of `//...` and `:all`.
    device_kwargs = {k: v for k, v in kwargs.items() if k in ("testonly",)}
    device_kwargs["tags"] = kwargs.get("tags", []) + ["manual"]
    hip_device_code(
        name = name + "_device",
        srcs = srcs,
        hdrs = hdrs,
        copts = copts,
        device_copts = device_copts,
        defines = defines,
        includes = includes,
        rocm_libs = rocm_libs,
        self_contained = self_contained,
        skip_unsupported_targets = skip_unsupported_targets,
        visibility = ["//visibility:private"],
        **device_kwargs
    )
    hip_library_rule(
        name = name,
        srcs = srcs,
        hdrs = hdrs,
        deps = deps,
        copts = copts,
        device_copts = device_copts,
        defines = defines,
        local_defines = local_defines,
        includes = includes,
        rocm_libs = rocm_libs,
        self_contained = self_contained,
        skip_unsupported_targets = skip_unsupported_targets,
        device = ":" + name + "_device",
        **kwargs
    )

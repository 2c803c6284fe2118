"""hip_library: per-gfx device compiles, one bundle, one host compile, CcInfo.

The hip_library macro makes two targets:
- `<name>_device` (hip_device_code): configured once per gfx target of
  --//:gfx, each in that target's own device configuration (the
  gfx_device_split transition). It runs no action: it resolves what may
  differ per target (copts, device_copts, defines, local_defines, through
  select() on //platforms/gfx) and checks the target against the compiler
  and the ROCm libraries;
- `<name>` (hip_library_rule): per source one host_compile (independent of
  the gfx set: never re-runs when it changes), one device_compile per gfx
  target, one bundle of the device objects, one embed of that bundle into the
  host object, and one kernel check (a validation action).
Host and device compiles get the same headers and include paths: the
compilation context of this target and its deps, which are configured once,
in the library's own configuration (never once per gfx target).
The actions and the names of their outputs are in actions/hip_compile.bzl;
the rules here only decide which actions run.

The host objects form an alwayslink static library in CcInfo, so cc_binary,
cc_shared_library and cc_library link it like any C++ library; the HIP
runtime is linked with -lamdhip64 (no RUNPATH: the final binary sets it).
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")
load("//rules/private:providers.bzl", "GfxInfo", "HipDeviceInfo", "HipInfo", "RocmLibraryInfo", "SettingInfo", "SysrootInfo")
load("//rules/private/actions:headers.bzl", "compilation_contexts")
load(
    "//rules/private/actions:hip_compile.bzl",
    "bundle",
    "context_flags",
    "define_flags",
    "device_compile",
    "embed",
    "embed_kpack",
    "host_compile",
    "kernel_check",
    "kpack_kernel_name",
    "kpack_marker",
    "mode_flags",
    "placeholder_bundle",
)
load("//rules/private/data:gfx_families.bzl", "sort_gfx_targets")
load("//rules/private/settings:transitions.bzl", "ALLOWLIST_ATTRS", "gfx_device_split")
load("//rules/private/util:labels.bzl", "label_as_typed")
load(":hip_toolchain.bzl", "HIP_TOOLCHAIN_TYPE", "hip_toolchain_info")
load(":rocm_wheel_toolchain.bzl", "ROCM_WHEEL_TOOLCHAIN_TYPE")

# The globals rules_cc re-exports (rules_cc 0.0.11 has no cc/common yet).
_CcInfo = CcInfo  # buildifier: disable=native-cc-info
_cc_common = cc_common  # buildifier: disable=native-cc-common

# Sources compiled as HIP (host and device code); `.cu.cc` is XLA's spelling.
_SRC_EXTS = [".hip", ".cu", ".cu.cc", ".cc", ".cpp", ".cxx"]

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
    fail(("{label}: {why}.\nFix: drop {target} from --{flag} (families and their targets: docs/gfx.md), " +
          "use a ROCm whose libraries support it (this is toolkit `{toolkit}`: another with " +
          "--@rules_rocm//rocm:toolkit or :toolkits, or ROCM_PATH=... for `local`), " +
          "or set skip_unsupported_targets = True on {label} to build it without {target} code.").format(
        label = _library_name(ctx),
        why = why,
        target = target,
        flag = label_as_typed(Label("//:gfx")),
        toolkit = ctx.attr._toolkit[SettingInfo].value,
    ))

def _hip_device_code_impl(ctx):
    target = ctx.attr._device_target[SettingInfo].value
    if not target:
        fail("{}: device code is built through hip_library (it needs a gfx device configuration)".format(ctx.label))
    hip = hip_toolchain_info(ctx)
    return [HipDeviceInfo(
        target = target,
        built = bool(hip.compiler) and _check_target(ctx, hip, target),
        defines = ctx.attr.defines + ctx.attr.local_defines,
        copts = ctx.attr.copts + ctx.attr.device_copts,
    )]

# What the device half resolves per gfx target (select() on //platforms/gfx).
_PER_TARGET_ATTRS = {
    "copts": attr.string_list(doc = "Flags for every ROCm-clang compile of this target (host and device)."),
    "defines": attr.string_list(doc = "Preprocessor defines of host and device compiles, propagated to dependents."),
    "device_copts": attr.string_list(doc = "Flags for device compiles only."),
    "local_defines": attr.string_list(doc = "Defines of this target's host and device compiles, not propagated."),
    "rocm_libs": attr.label_list(providers = [RocmLibraryInfo], doc = "ROCm libraries the sources use (@rules_rocm//rocm:rocprim, ...): a target one of them refuses is an analysis error (or left out with skip_unsupported_targets)."),
    "self_contained": attr.bool(doc = "Device code needs no device library, so targets the compiler accepts only with -nogpulib build too."),
    "skip_unsupported_targets": attr.bool(doc = "Targets the compiler or a ROCm library dep cannot build get no device code (and a build warning) instead of an analysis error."),
}

hip_device_code = rule(
    implementation = _hip_device_code_impl,
    attrs = dict(_PER_TARGET_ATTRS, **{
        "_device_target": attr.label(default = Label("//platforms/gfx:device_target")),
        "_toolkit": attr.label(default = Label("//rocm:toolkit")),
    }),
    toolchains = [str(HIP_TOOLCHAIN_TYPE)],
    doc = "Internal: the per-gfx-target half of hip_library (flags resolved per target, the target checked).",
)

def _resolve_compression(ctx, hip):
    c = ctx.attr._compression[SettingInfo].value
    if c == "auto":
        # Compressed (CCOB) bundles are read by the HIP runtime from ROCm 6.2 on.
        parts = hip.hip_version.split(".")
        if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit() and (int(parts[0]), int(parts[1])) >= (6, 2):
            return "zstd"
        return "none"
    return c

def _device_targets(ctx):
    """HipDeviceInfo of every gfx target that gets device code, in gfx order."""
    infos = {}
    for dep in ctx.split_attr.device.values():
        info = dep[HipDeviceInfo]
        if info.built:
            infos[info.target] = info
    return [infos[t] for t in sort_gfx_targets(infos.keys())]

def _runtime_files(ctx, hip):
    # -L names the runtime's directory; a toolkit in a repository makes its
    # libraries inputs of every link that passes it.
    return _cc_common.create_linking_context(linker_inputs = depset([_cc_common.create_linker_input(
        owner = ctx.label,
        additional_inputs = hip.runtime_files,
    )]))

def _cc_info(ctx, hip, host_objects, public_context):
    """CcInfo: this target's headers and defines, its host objects as an alwayslink static library, and its deps."""
    cc_toolchain = find_cpp_toolchain(ctx)
    feature_configuration = _cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    linking_context, _ = _cc_common.create_linking_context_from_compilation_outputs(
        actions = ctx.actions,
        feature_configuration = feature_configuration,
        cc_toolchain = cc_toolchain,
        compilation_outputs = _cc_common.create_compilation_outputs(
            objects = depset(host_objects),
            pic_objects = depset(host_objects),
        ),
        name = ctx.label.name,
        alwayslink = True,
        # By path, not -L: a -L of /usr/lib/<triple> would put the building
        # machine's libc and libstdc++ ahead of a sysroot's.
        user_link_flags = [hip.runtime_lib_dir + "/libamdhip64.so"],
        linking_contexts = [_runtime_files(ctx, hip)] + [d[_CcInfo].linking_context for d in ctx.attr.deps + ctx.attr.implementation_deps + ctx.attr.rocm_libs],
        disallow_dynamic_library = True,
    )
    return _cc_common.merge_cc_infos(
        direct_cc_infos = [_CcInfo(compilation_context = public_context, linking_context = linking_context)],
        # implementation_deps are linked, but their headers stay private.
        cc_infos = [d[_CcInfo] for d in ctx.attr.deps + ctx.attr.rocm_libs] +
                   [_CcInfo(linking_context = d[_CcInfo].linking_context) for d in ctx.attr.implementation_deps],
    )

def _compile_setup(ctx):
    """struct(headers, host_flags, device_flags(info)): what every compile of this target sees."""
    contexts = compilation_contexts(ctx, ctx.attr.defines)
    merged = _cc_common.merge_cc_infos(
        direct_cc_infos = [_CcInfo(compilation_context = contexts.compile)],
        cc_infos = [d[_CcInfo] for d in ctx.attr.deps + ctx.attr.implementation_deps + ctx.attr.rocm_libs],
    ).compilation_context

    # Both halves: the include paths of the target and its deps, then the
    # deps' defines; global flags before the target's own, as cc_library
    # puts --copt before copts.
    shared = context_flags(merged) + define_flags(merged.defines.to_list())
    mode = mode_flags(ctx)
    hip_copts = ctx.attr._hip_copts[SettingInfo].value
    cpp = ctx.fragments.cpp

    # Both halves parse the C++ library's headers: the same sysroot for both.
    sysroot = ctx.attr._sysroot[SysrootInfo]
    host_flags = (mode.host + sysroot.compile_flags + cpp.copts + cpp.cxxopts + hip_copts + shared +
                  define_flags(ctx.attr.defines + ctx.attr.local_defines) + ctx.attr.copts)
    device_globals = mode.device + sysroot.compile_flags + hip_copts + ctx.attr._hip_device_copts[SettingInfo].value
    return struct(
        public_context = contexts.public,
        headers = depset(transitive = [merged.headers, sysroot.compile_files]),
        host_flags = host_flags,
        device_flags = lambda info: device_globals + shared + define_flags(info.defines) + info.copts,
    )

def _hip_library_impl(ctx):
    hip = hip_toolchain_info(ctx)
    if not hip.compiler:
        fail("{}: the HIP toolchain has no ROCm clang for host code".format(ctx.label))
    devices = _device_targets(ctx)
    compress = _resolve_compression(ctx, hip)
    kpack = ctx.attr._device_code[SettingInfo].value == "kpack"
    if kpack and compress == "zlib":
        fail("--{}=zlib with --{}=kpack: kpack archives store kernels uncompressed (none) or as zstd frames (zstd, auto)".format(label_as_typed(ctx.attr._compression.label), label_as_typed(ctx.attr._device_code.label)))
    setup = _compile_setup(ctx)
    placeholder = placeholder_bundle(ctx)
    host_objects = []
    bundles = []
    checks = []
    device_objects = {info.target: [] for info in devices}
    kpack_kernels = []
    for src in ctx.files.srcs:
        entries = [
            (info.target, device_compile(ctx, hip, src, info.target, setup.device_flags(info), setup.headers))
            for info in devices
        ]
        for t, co in entries:
            device_objects[t].append(co)
        host = host_compile(ctx, hip, src, placeholder, setup.host_flags, setup.headers)
        if kpack:
            name = kpack_kernel_name(ctx, src)
            marker, wrapper = kpack_marker(ctx, src, name)
            host_objects.append(embed_kpack(ctx, hip, src, host, marker, wrapper))
            kpack_kernels += [struct(key = name + "#0", target = t, object = co) for t, co in entries]
        else:
            fatbin = bundle(ctx, hip, src, entries, compress)
            host_objects.append(embed(ctx, hip, src, host, fatbin, len(entries)))
            bundles.append(fatbin)
        if entries:
            checks.append(kernel_check(ctx, hip, src, host, entries))

    return [
        _cc_info(ctx, hip, host_objects, setup.public_context),
        HipInfo(
            targets = [info.target for info in devices],
            bundles = bundles,
            device_objects = device_objects,
            kpack_kernels = kpack_kernels,
        ),
        DefaultInfo(files = depset(host_objects)),
        OutputGroupInfo(
            bundles = depset(bundles),
            device_objects = depset([f for fs in device_objects.values() for f in fs]),
            _validation = depset(checks),
        ),
    ]

hip_library_rule = rule(
    implementation = _hip_library_impl,
    attrs = _PER_TARGET_ATTRS | ALLOWLIST_ATTRS | {
        "deps": attr.label_list(providers = [_CcInfo], doc = "C++ libraries (cc_library, hip_library, ...): headers, include paths and defines for host and device compiles, linked with the host code."),
        "device": attr.label(
            mandatory = True,
            cfg = gfx_device_split,
            providers = [HipDeviceInfo],
            doc = "The hip_device_code target (made by the hip_library macro).",
        ),
        "hdrs": attr.label_list(allow_files = True, doc = "Headers of this library, for its compiles and its dependents' (any file name, as in cc_library)."),
        "implementation_deps": attr.label_list(providers = [_CcInfo], doc = "Like deps, but their headers are not visible to dependents."),
        "include_prefix": attr.string(doc = "Path prefix of `hdrs` for dependents (after strip_include_prefix)."),
        "includes": attr.string_list(doc = "Include directories relative to the package: -isystem of this target and its dependents."),
        "srcs": attr.label_list(allow_files = _SRC_EXTS, doc = "HIP sources; each gets one bundle."),
        "strip_include_prefix": attr.string(doc = "Prefix removed from `hdrs` paths (relative to the package, or to the repository with a leading '/')."),
        "textual_hdrs": attr.label_list(allow_files = True, doc = "Headers only included textually (.inc, .def, ...)."),
        "_cc_toolchain": attr.label(default = "@bazel_tools//tools/cpp:current_cc_toolchain"),
        "_compression": attr.label(default = Label("//:hip_bundle_compression"), providers = [SettingInfo]),
        "_device_code": attr.label(default = Label("//:hip_device_code"), providers = [SettingInfo]),
        # Validates --//:gfx (the split transition only expands it).
        "_gfx": attr.label(default = Label("//:gfx"), providers = [GfxInfo]),
        "_hip_copts": attr.label(default = Label("//:hip_copts"), providers = [SettingInfo]),
        "_hip_device_copts": attr.label(default = Label("//:hip_device_copts"), providers = [SettingInfo]),
        "_sysroot": attr.label(default = Label("//rocm:selected_sysroot"), providers = [SysrootInfo]),
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
        textual_hdrs = [],
        deps = [],
        implementation_deps = [],
        rocm_libs = [],
        copts = [],
        device_copts = [],
        defines = [],
        local_defines = [],
        includes = [],
        strip_include_prefix = "",
        include_prefix = "",
        self_contained = False,
        skip_unsupported_targets = False,
        **kwargs):
    """A HIP library compiled for every gfx target of --//:gfx, with cc_library semantics on both halves.

    Every compile, host and device, sees the same headers, include paths and
    defines: those of this target and of its deps (transitively), plus
    `local_defines`. Flags, in order: `-c` mode flags, then (host only)
    --copt/--cxxopt, then --@rules_rocm//:hip_copts, (device only)
    --@rules_rocm//:hip_device_copts, include paths, defines, `copts` and
    (device only) `device_copts`. See docs/rules/hip_library.md.
    Long because the docstring documents every attribute.

    Args:
      name: target name; provides CcInfo (link it from cc_binary/cc_library) and HipInfo.
      srcs: HIP sources (.hip, .cu, .cu.cc, .cc, .cpp, .cxx: host + device
        code, non-RDC: one bundle per source).
      hdrs: headers of this library, any file name (Eigen/Core too).
      textual_hdrs: headers only included textually (.inc files).
      deps: C++ libraries (cc_library, hip_library, @rules_rocm//rocm:*):
        their headers, include paths and defines reach host and device
        compiles; they are linked with the host code.
      implementation_deps: like deps, but hidden from dependents' compiles.
      rocm_libs: ROCm libraries the sources use (@rules_rocm//rocm:rocprim,
        @rules_rocm//rocm:hipcub): a --//:gfx target the installed version
        refuses is an analysis error naming the library, or is left out with
        skip_unsupported_targets.
      copts: ROCm clang flags for host and device compiles.
      device_copts: flags for device compiles only.
      defines: defines for host and device, propagated to dependents.
      local_defines: defines for this library's host and device compiles.
      includes: include directories relative to the package (-isystem,
        propagated to dependents).
      strip_include_prefix: prefix removed from the paths of `hdrs` for
        #include (relative to the package; '/...' to the repository root).
      include_prefix: prefix added to the paths of `hdrs` for #include.
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
    per_target = dict(
        copts = copts,
        device_copts = device_copts,
        defines = defines,
        local_defines = local_defines,
        rocm_libs = rocm_libs,
        self_contained = self_contained,
        skip_unsupported_targets = skip_unsupported_targets,
    )
    hip_device_code(
        name = name + "_device",
        visibility = ["//visibility:private"],
        **(per_target | device_kwargs)
    )
    hip_library_rule(
        name = name,
        srcs = srcs,
        hdrs = hdrs,
        textual_hdrs = textual_hdrs,
        deps = deps,
        implementation_deps = implementation_deps,
        includes = includes,
        strip_include_prefix = strip_include_prefix,
        include_prefix = include_prefix,
        device = ":" + name + "_device",
        **(per_target | kwargs)
    )

"""The HIP toolchain: the ROCm clang for host code and every device target.

Configured by `rocm_hip_repository` (repositories/hip_repository.bzl) from a ROCm root.
"""

load("//rules/private:providers.bzl", "HipCompilerInfo", "HipToolchainInfo")

HIP_TOOLCHAIN_TYPE = Label("//rules:hip_toolchain_type")

def toolkit_path(ctx, path):
    """`path` of a toolkit target (hip_toolchain, rocm_library) as actions name it.

    A toolkit inside its repository (a downloaded archive, `in_repository`)
    is named by its execution-root path, so command lines and cache keys do
    not depend on the output base; its files are then inputs of every action
    using it. An installed toolkit's paths are absolute and stay as they are.
    """
    if ctx.attr.in_repository and path:
        return ctx.label.workspace_root + "/" + path
    return path

def _hip_toolchain_impl(ctx):
    a = ctx.attr
    compiler = None
    if ctx.executable.clang:
        compiler = HipCompilerInfo(
            name = a.clang_name,
            executable = ctx.executable.clang,
            targets = a.clang_targets,
            nogpulib_targets = a.clang_nogpulib_targets,
        )
    return [platform_common.ToolchainInfo(
        hip = HipToolchainInfo(
            unavailable = a.unavailable,
            rocm_path = toolkit_path(ctx, a.rocm_path),
            rocm_version = a.rocm_version,
            hip_version = a.hip_version or ".".join(a.rocm_version.split(".")[:2]),
            device_lib_path = toolkit_path(ctx, a.device_lib_path),
            runtime_lib_dir = toolkit_path(ctx, a.runtime_lib_dir),
            files = depset(ctx.files.files),
            runtime_files = depset(ctx.files.runtime_files),
            sdk_version = a.sdk_version,
            host_offload_arch = a.host_offload_arch,
            compiler = compiler,
            bundler = ctx.executable.bundler,
            objcopy = ctx.executable.objcopy,
            cxxfilt = ctx.executable.cxxfilt,
        ),
    )]

hip_toolchain = rule(
    implementation = _hip_toolchain_impl,
    attrs = {
        "bundler": attr.label(executable = True, allow_single_file = True, cfg = "exec", doc = "clang-offload-bundler (writes host-only bundles)."),
        "clang": attr.label(executable = True, allow_single_file = True, cfg = "exec", doc = "ROCm clang++ (host + device)."),
        "clang_name": attr.string(),
        "clang_nogpulib_targets": attr.string_list(doc = "Targets compiled with -nogpulib (no device-library ISA bitcode)."),
        "clang_targets": attr.string_list(doc = "gfx targets the ROCm clang compiles."),
        "device_lib_path": attr.string(doc = "Directory with ocml.bc etc."),
        "files": attr.label_list(allow_files = True, doc = "Toolkit files every compile reads (compiler, its libraries, headers, device libraries): inputs when the toolkit lives in a repository."),
        "in_repository": attr.bool(doc = "The paths are relative to this target's repository (a downloaded toolkit), not absolute."),
        "hip_version": attr.string(doc = "major.minor of HIP itself (hip_version.h), e.g. 7.2: what its runtime reads. Empty: that of rocm_version."),
        "host_offload_arch": attr.string(doc = "Any target the ROCm clang accepts; host-only compiles need one."),
        "cxxfilt": attr.label(executable = True, allow_single_file = True, cfg = "exec", doc = "Optional llvm-cxxfilt: kernel names in hip_library's kernel-check reports demangled."),
        "objcopy": attr.label(executable = True, allow_single_file = True, cfg = "exec", doc = "llvm-objcopy of the ROCm LLVM (replaces .hip_fatbin)."),
        "rocm_path": attr.string(doc = "The ROCm root (headers under include/)."),
        "rocm_version": attr.string(doc = "The ROCm release, major.minor.patch (e.g. 7.2.4): what wheel names and SDK pins follow. HIP's own version may differ (TheRock's 10.1.0 ships HIP 7.12)."),
        "runtime_lib_dir": attr.string(doc = "Directory holding libamdhip64.so."),
        "runtime_files": attr.label_list(allow_files = True, doc = "The HIP runtime's shared libraries, inputs of links (a toolkit in a repository)."),
        "sdk_version": attr.string(doc = "The exact TheRock SDK release this toolkit is (e.g. 7.13.0a20261201), which kpack device wheels pin " +
                                         "(rocm-sdk-device-<target>==it); empty for a ROCm whose device code does not come from TheRock's pip SDK."),
        "unavailable": attr.string(doc = "Non-empty: why no ROCm was found (reported when a HIP rule is built)."),
    },
    doc = """A HIP toolchain: the ROCm clang for host code and every device target, and the facts rules need about its ROCm.

rocm_toolkit_repository (repositories.bzl) generates one per toolkit; declare
your own for a ROCm laid out in a way the repository rule does not detect,
and register it with a `toolchain(toolchain_type = "@rules_rocm//rules:hip_toolchain_type")`.""",
)

def _rocm_make_variables_impl(ctx):
    hip = hip_toolchain_info(ctx)
    parts = hip.rocm_version.split(".")
    if len(parts) not in (2, 3) or not all([p.isdigit() for p in parts]):
        fail("{}: the HIP toolchain's rocm_version is '{}', not a ROCm release (major.minor.patch, e.g. 7.2.4); names and pins derived from it need one".format(ctx.label, hip.rocm_version))
    return [platform_common.TemplateVariableInfo({
        "ROCM_MAJOR": parts[0],
        "ROCM_VERSION": parts[0] + "." + parts[1],
        "ROCM_RELEASE": hip.rocm_version,
        # Empty when the toolkit is no TheRock SDK release: nothing to pin.
        "ROCM_SDK_VERSION": hip.sdk_version,
    })]

rocm_make_variables = rule(
    implementation = _rocm_make_variables_impl,
    toolchains = [str(HIP_TOOLCHAIN_TYPE)],
    doc = """Make variables of the selected ROCm release (not of HIP, whose version can differ):
$(ROCM_MAJOR) (7), $(ROCM_VERSION) (7.2) and $(ROCM_RELEASE) (7.2.4), for names such as
jax-rocm$(ROCM_MAJOR)-pjrt (toolchains = [this target]); $(ROCM_SDK_VERSION) is the exact TheRock
SDK release the toolkit is (7.13.0a20261201), empty for a system ROCm.""",
)

def hip_toolchain_info(ctx):
    """The resolved HIP toolchain, failing with the configuration problem if it has one."""
    hip = ctx.toolchains[str(HIP_TOOLCHAIN_TYPE)].hip
    if hip.unavailable:
        fail("{}: no usable HIP toolchain: {}".format(ctx.label, hip.unavailable))
    return hip

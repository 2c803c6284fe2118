"""XLA's @local_config_rocm//rocm:build_defs.bzl over rules_rocm (generated).

ROCm is always configured here (a machine without it fails at analysis,
naming the package to install); GPU targets come from --@rules_rocm//:gfx,
not from the repository.
"""

load("{DEFS_BZL}", "hip_library")
load("{TOOLKIT_TARGETS_BZL}", "ROCM_VERSION_NUMBER")

# Targets of this package that are rules_rocm ROCm libraries.
_LIBRARIES = {LIBRARIES}

_HERE = Label("//rocm:rocm_headers")

def is_rocm_configured():
    """True: this repository exists only over a rules_rocm toolkit."""
    return True

def if_rocm_is_configured(if_true, if_false = []):  # buildifier: disable=unused-variable
    """`if_true`: ROCm is configured."""
    return if_true

def if_rocm(if_true, if_false = []):  # buildifier: disable=unused-variable
    """`if_true`: every build is a ROCm build (XLA selects on --config=rocm)."""
    return if_true

def rocm_copts(opts = []):
    """`opts`: hip_library adds the HIP language and offload flags per gfx target itself."""
    return opts

def rocm_version_number():
    """The default toolkit's ROCm release, major * 10000 + minor * 100 + patch (70204 for 7.2.4).

    Read when BUILD files load, so it is the default toolkit's, not one a
    --@rules_rocm//rocm:toolkit flag selects; name wheels with $(ROCM_MAJOR)
    (toolchains = ["@rules_rocm//rocm:version"]) to follow the flag.
    """
    return ROCM_VERSION_NUMBER

def rocm_gpu_architectures():
    fail("rocm_gpu_architectures() is XLA's load-time TF_ROCM_AMDGPU_TARGETS list; with rules_rocm " +
         "the GPU targets are the build flag --@rules_rocm//:gfx, which rocm_library (a hip_library) " +
         "reads at analysis, compiling each target separately. Compile device code with rocm_library " +
         "instead of passing --offload-arch yourself.")

def _is_library(dep):
    label = native.package_relative_label(dep)
    return label.workspace_name == _HERE.workspace_name and label.package == "rocm" and label.name in _LIBRARIES

def rocm_library(name, deps = [], **kwargs):
    """XLA's rocm_library as a rules_rocm hip_library.

    ROCm library deps (`:hipblas`, `:rocprim`, ...) become `rocm_libs`, so
    a --@rules_rocm//:gfx target the installed version refuses is an
    analysis error; `:rocm_headers` is added as XLA's macro does.
    """
    libs = [d for d in deps if _is_library(d)]
    others = [d for d in deps if not _is_library(d)]
    headers = str(_HERE)
    if headers not in [str(native.package_relative_label(d)) for d in others]:
        others.append(headers)
    hip_library(
        name = name,
        deps = others,
        rocm_libs = kwargs.pop("rocm_libs", []) + libs,
        **kwargs
    )

"""A repository XLA's and JAX's BUILD files know as @local_config_rocm, over rules_rocm.

XLA's `rocm_configure` makes `@local_config_rocm` from a ROCm install and
TF_ROCM_AMDGPU_TARGETS; JAX's and XLA's BUILD files load its
`//rocm:build_defs.bzl` (rocm_library, if_rocm_is_configured, ...) and name
its targets (`:rocm_headers`, `:hipblas`, `:hip_runtime`, ...). This
repository gives them the same names backed by the selected rules_rocm
toolkit: `rocm_library` is a hip_library (one device compile per
--@rules_rocm//:gfx target, the kernel check), the library targets are
rules_rocm's version-checked ROCm libraries. What it cannot honour fails
with the rules_rocm way instead of being dropped: TF_ROCM_AMDGPU_TARGETS at
fetch time, --@local_config_rocm//rocm:rocm_path_type at analysis time,
rocm_gpu_architectures() at load time. docs/porting.md, "Using XLA/JAX
BUILD files unchanged".
"""

load("//rules/private/data:rocm_library_table.bzl", "ROCM_LIBRARIES")
load("//rules/private/util:labels.bzl", "abs_label")
load(":repository_utils.bzl", "write_template")

# XLA's repository-time GPU target list: refused, not ignored.
_TARGETS_ENV = "TF_ROCM_AMDGPU_TARGETS"

def _local_config_rocm_impl(rctx):
    targets = rctx.os.environ.get(_TARGETS_ENV, "")
    if targets:
        fail(("{env}={targets} is not read by rules_rocm's @local_config_rocm: GPU targets are the " +
              "build flag --@rules_rocm//:gfx (TheRock family names or single targets, e.g. " +
              "--@rules_rocm//:gfx={flag}; docs/gfx.md). Drop {env} from --repo_env/--action_env " +
              "and the environment.").format(env = _TARGETS_ENV, targets = targets, flag = targets.replace(";", ",")))
    rules_rocm = abs_label(Label("//:BUILD.bazel")).split("//")[0]
    libraries = sorted(ROCM_LIBRARIES.keys())
    rctx.file("BUILD.bazel", "")
    write_template(rctx, "rocm/BUILD.bazel", "local_config_rocm.BUILD.tpl", {
        "{RULES_ROCM}": rules_rocm,
        "{LIBRARIES}": repr(libraries),
        "{COMPAT_BZL}": abs_label(Label("//rules/private/rules:local_config_rocm_targets.bzl")),
    })
    write_template(rctx, "rocm/build_defs.bzl", "local_config_rocm.build_defs.bzl.tpl", {
        "{DEFS_BZL}": abs_label(Label("//rules:defs.bzl")),
        "{TOOLKIT_TARGETS_BZL}": "@{}//:targets.bzl".format(rctx.attr.default_toolkit_repository),
        "{LIBRARIES}": repr(libraries),
    })

local_config_rocm_repository = repository_rule(
    implementation = _local_config_rocm_impl,
    attrs = {
        "default_toolkit_repository": attr.string(
            mandatory = True,
            doc = "The repository of the default toolkit, whose ROCm version rocm_version_number() returns.",
        ),
    },
    environ = [_TARGETS_ENV],
    doc = "XLA's @local_config_rocm names (//rocm:build_defs.bzl, :rocm_headers, :hipblas, ...) over rules_rocm's selected toolkit.",
)

"""Rules of the @local_config_rocm compatibility repository (repositories/local_config_rocm_repository.bzl)."""

load("//rules/private:providers.bzl", "RocmLibraryInfo", "SettingInfo")

_CcInfo = CcInfo  # buildifier: disable=native-cc-info

# --@local_config_rocm//rocm:rocm_path_type: what each value XLA knows means
# with rules_rocm, which has nothing to switch.
_PATH_TYPE_FIXES = {
    "hermetic": "the ROCm comes from the toolkit --@rules_rocm//rocm:toolkit selects " +
                "(declare a TheRock tarball with rocm.toolkit in MODULE.bazel; docs/toolkits.md)",
    "link_only": "rules_rocm links no build-tree RUNPATH (no Bazel _solib entries) into extensions; " +
                 "their wheel RUNPATH is python_extension(runpath = [\"$ORIGIN/...\"]) " +
                 "(docs/porting.md, \"Using XLA/JAX BUILD files unchanged\")",
}

def _rocm_path_type_impl(ctx):
    return [SettingInfo(value = ctx.build_setting_value)]

rocm_path_type_flag = rule(
    implementation = _rocm_path_type_impl,
    build_setting = config.string(flag = True),
    doc = "XLA's --@local_config_rocm//rocm:rocm_path_type; every target of the repository fails unless it is `system` (the default).",
)

def _forward_impl(ctx):
    value = ctx.attr.path_type[SettingInfo].value
    if value != "system":
        fail("--{}={} has no meaning with rules_rocm: {}. Drop the flag.".format(
            "@local_config_rocm//rocm:rocm_path_type",
            value,
            _PATH_TYPE_FIXES.get(value, "its only value is system"),
        ))
    actual = ctx.attr.actual
    providers = [DefaultInfo(files = actual[DefaultInfo].files), actual[_CcInfo]]
    if RocmLibraryInfo in actual:
        providers.append(actual[RocmLibraryInfo])
    return providers

local_config_rocm_target = rule(
    implementation = _forward_impl,
    attrs = {
        "actual": attr.label(mandatory = True, providers = [_CcInfo]),
        "path_type": attr.label(mandatory = True, providers = [SettingInfo], doc = "The repository's rocm_path_type flag."),
    },
    doc = "A rules_rocm ROCm target under XLA's name; fails when --@local_config_rocm//rocm:rocm_path_type asks for what rules_rocm does not do.",
)

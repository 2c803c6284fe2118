toolchain(
    name = {NAME},
    exec_compatible_with = [
        "@platforms//os:linux",
        "@platforms//cpu:x86_64",
    ],
    target_compatible_with = [
        "@platforms//os:linux",
        "@platforms//cpu:{CPU}",
    ],
    target_settings = [{SETTING}],
    toolchain = {TOOLCHAIN},
    toolchain_type = "@bazel_tools//tools/cpp:toolchain_type",
)

config_setting(
    name = {SETTING},
    flag_values = {{FLAG}: {NAME}},
)

toolchain(
    name = {NAME},
    exec_compatible_with = [
        "@platforms//os:linux",
        "@platforms//cpu:x86_64",
    ],
    target_settings = [{SETTING}],
    toolchain = {TOOLCHAIN},
    toolchain_type = {TOOLCHAIN_TYPE},
)

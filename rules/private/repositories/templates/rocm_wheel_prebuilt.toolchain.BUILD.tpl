toolchain(
    name = {NAME},
    exec_compatible_with = {EXEC_COMPATIBLE_WITH},
    toolchain = {TOOLCHAIN},
    toolchain_type = {TOOLCHAIN_TYPE},
)

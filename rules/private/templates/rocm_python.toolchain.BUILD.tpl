cc_library(
    name = "python_headers_{U}",
    hdrs = glob(["include/{V}/**/*.h"]),
    includes = ["include/{V}"],
)

rocm_python_toolchain(
    name = "python_{U}",
    abi_tag = {ABI_TAG},
    ext_suffix = {EXT_SUFFIX},
    full_version = {FULL_VERSION},
    headers = ":python_headers_{U}",
    interpreter = {INTERPRETER},
    python_tag = {TAG},
    soabi = {SOABI},
    version = "{V}",
)

config_setting(
    name = "is_{U}",
    flag_values = {"{VERSION_SETTING}": "{V}"},
)

toolchain(
    name = "toolchain_{U}",
    target_settings = [":is_{U}"],
    toolchain = ":python_{U}",
    toolchain_type = "{TOOLCHAIN_TYPE}",
)

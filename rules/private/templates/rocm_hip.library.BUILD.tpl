rocm_library(
    name = {NAME},
    deps = {DEPS},
    display_name = {DISPLAY},
    include_dir = {INCLUDE_DIR},
    lib_dir = {LIB_DIR},
    link = {LINK},
    refused = {REFUSED},
    rocm_version = {ROCM_VERSION},
    unavailable = {UNAVAILABLE},
    version = {VERSION},
)

# Every ROCm header also as "rocm/include/<path>" (the spelling XLA and JAX
# use; rocm/include/<dir> links to {ROOT}/include/<dir>), plus
# "rocm/rocm_config.h". Plain C++ users (g++) need the HIP platform macro
# that clang -x hip defines itself.
cc_library(
    name = "rocm_headers",
    hdrs = ["rocm/rocm_config.h"] + glob(
        ["rocm/include/" + d + "/**" for d in {HEADER_DIRS}],
        allow_empty = True,
    ),
    defines = {DEFINES},
    includes = [
        ".",
        "rocm/include",
    ],
)

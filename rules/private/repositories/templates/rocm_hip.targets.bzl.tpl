ROCM_CLANG_TARGETS = {TARGETS}
ROCM_NOGPULIB_TARGETS = {NOGPULIB}

# The ROCm release as XLA's rocm_version_number() spells it (major * 10000 +
# minor * 100 + patch); 0 without a usable ROCm.
ROCM_VERSION_NUMBER = {VERSION_NUMBER}

# Debian 12's zstd 1.5.4 exports zstd::libzstd_shared only; rocm-kpack links
# zstd::libzstd (zstd 1.5.6 on). The system's targets, plus that name.
include(/usr/lib/x86_64-linux-gnu/cmake/zstd/zstdTargets.cmake)
if(NOT TARGET zstd::libzstd)
  add_library(zstd::libzstd INTERFACE IMPORTED)
  set_target_properties(zstd::libzstd PROPERTIES INTERFACE_LINK_LIBRARIES zstd::libzstd_shared)
endif()

# Debian 12's msgpack-cxx 4.1 names its CMake target msgpackc-cxx; rocm-kpack
# asks for msgpack-cxx (the name from msgpack-cxx 6 on). Header-only: an
# interface target over the installed headers, without Boost.
if(NOT TARGET msgpack-cxx)
  add_library(msgpack-cxx INTERFACE IMPORTED)
  set_target_properties(msgpack-cxx PROPERTIES INTERFACE_COMPILE_DEFINITIONS MSGPACK_NO_BOOST)
endif()

# {fmt}, header-only, so that no library of tritonrt needs libfmt at run time: the system's
# (apt install libfmt-dev), or the headers under TRITONRT_FMT_INCLUDE_DIR (the GPU machine
# has none installed; .ci/gpu-run carries them). Defines tritonrt_fmt, for private use.
include_guard(GLOBAL)
find_package(fmt 9 CONFIG QUIET)
add_library(tritonrt_fmt INTERFACE)
if(TARGET fmt::fmt-header-only AND NOT TRITONRT_FMT_INCLUDE_DIR)
  target_link_libraries(tritonrt_fmt INTERFACE fmt::fmt-header-only)
else()
  find_path(TRITONRT_FMT_INCLUDE_DIR fmt/format.h)
  if(NOT TRITONRT_FMT_INCLUDE_DIR)
    message(FATAL_ERROR "tritonrt needs {fmt} 9 or newer (apt install libfmt-dev, or "
                        "-DTRITONRT_FMT_INCLUDE_DIR=<the folder holding fmt/format.h>)")
  endif()
  target_include_directories(tritonrt_fmt SYSTEM INTERFACE ${TRITONRT_FMT_INCLUDE_DIR})
  target_compile_definitions(tritonrt_fmt INTERFACE FMT_HEADER_ONLY=1)
endif()

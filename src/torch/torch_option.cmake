# TRITONRT_BUILD_TORCH: build the torch adapter, the operator library and their tests and
# benchmark only where Python_EXECUTABLE imports torch, so a torch-free environment still
# builds the core. Included by every CMakeLists.txt that adds torch targets, whichever CMake
# reads first (tests/ and bench/ come before the top-level block that defines the targets).
include_guard(GLOBAL)
execute_process(COMMAND "${Python_EXECUTABLE}" -c
                        "import torch; print(torch.utils.cmake_prefix_path); print(torch.__version__)"
                RESULT_VARIABLE _tritonrt_torch_missing OUTPUT_VARIABLE _tritonrt_torch_answer
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
set(_tritonrt_torch_prefix "")
set(_tritonrt_torch_version "")
if(_tritonrt_torch_missing)
  set(_tritonrt_torch_default OFF)
  message(STATUS "tritonrt: ${Python_EXECUTABLE} cannot import torch: the torch adapter and ops are not built")
else()
  set(_tritonrt_torch_default ON)
  string(REPLACE "\n" ";" _tritonrt_torch_answer "${_tritonrt_torch_answer}")
  list(GET _tritonrt_torch_answer 0 _tritonrt_torch_prefix)
  list(GET _tritonrt_torch_answer -1 _tritonrt_torch_version)
endif()
option(TRITONRT_BUILD_TORCH "Build the torch adapter (tritonrt::torch) and the operator library (needs torch)"
       ${_tritonrt_torch_default})
set(TRITONRT_TORCH_CMAKE_PREFIX "${_tritonrt_torch_prefix}" CACHE INTERNAL "torch.utils.cmake_prefix_path")
# The ops are C++ against this torch's ABI: tritonrt.ops refuses another release at import.
set(TRITONRT_TORCH_VERSION "${_tritonrt_torch_version}" CACHE INTERNAL "torch.__version__")

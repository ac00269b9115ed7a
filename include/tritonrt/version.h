// tritonrt's version, and the versions of what it runs with. CMakeLists.txt reads the
// project version from here.
#pragma once

#include <string>

#define TRITONRT_VERSION_MAJOR 0
#define TRITONRT_VERSION_MINOR 2
#define TRITONRT_VERSION_PATCH 0

#define TRITONRT_STRINGIFY_VERSION_(major, minor, patch) #major "." #minor "." #patch
#define TRITONRT_STRINGIFY_VERSION(major, minor, patch) TRITONRT_STRINGIFY_VERSION_(major, minor, patch)
/// "major.minor.patch"
#define TRITONRT_VERSION \
  TRITONRT_STRINGIFY_VERSION(TRITONRT_VERSION_MAJOR, TRITONRT_VERSION_MINOR, TRITONRT_VERSION_PATCH)

namespace tritonrt {

/// The version of the Triton that compiles for this process, asked through Python (started
/// if the process has none). Throws PythonError where Python or Triton cannot be loaded.
std::string triton_version();

/// The Python version ("3.12") tritonrt's compiler module was built for; the one it embeds,
/// or the process's own, must be of that minor version.
std::string python_version();

}  // namespace tritonrt

// tritonrt's version. CMakeLists.txt reads the project version from here.
#pragma once

#define TRITONRT_VERSION_MAJOR 0
#define TRITONRT_VERSION_MINOR 2
#define TRITONRT_VERSION_PATCH 0

#define TRITONRT_STRINGIFY_VERSION_(major, minor, patch) #major "." #minor "." #patch
#define TRITONRT_STRINGIFY_VERSION(major, minor, patch) TRITONRT_STRINGIFY_VERSION_(major, minor, patch)
/// "major.minor.patch"
#define TRITONRT_VERSION \
  TRITONRT_STRINGIFY_VERSION(TRITONRT_VERSION_MAJOR, TRITONRT_VERSION_MINOR, TRITONRT_VERSION_PATCH)

// Device contexts: the context a launch runs in, and the device limits it is checked against.
#pragma once

#include <cuda.h>

#include "tritonrt/options.h"

namespace tritonrt::detail {

/// A device context and what a launch in it must respect.
struct DeviceContext {
  CUcontext context = nullptr;
  CUdevice device = 0;
  Target target;
  int max_grid[3] = {0, 0, 0};
  int max_shared_optin = 0;
  int multiprocessors = 0;

  /// Reads the device and limits of `ctx` from the driver.
  static DeviceContext describe(CUcontext ctx);
};

/// The context a launch on `stream` runs in: the stream's, or the thread's current one
/// (device 0's primary context, made current, when the thread has none yet).
CUcontext launch_context(void* stream);

/// Makes `ctx` current for its lifetime, whatever the thread's current context is.
class ScopedContext {
 public:
  explicit ScopedContext(CUcontext ctx);
  ~ScopedContext();
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;
};

}  // namespace tritonrt::detail

// The driver entry points tests and benchmarks call besides the library's own (memory,
// streams, graphs, modules loaded by hand), resolved through tritonrt's driver so that both
// use the same libcuda and the same prototypes.
#pragma once

#include "driver/driver.h"

namespace tritonrt::test {

#define TRITONRT_TEST_DRIVER_ENTRIES(X)                                                                          \
  X(cuDeviceGet)                                                                                                 \
  X(cuDeviceGetAttribute)                                                                                        \
  X(cuDeviceGetCount) X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuCtxPushCurrent) X(cuCtxPopCurrent)      \
      X(cuCtxSynchronize) X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuStreamGetCtx)          \
          X(cuStreamBeginCapture) X(cuStreamEndCapture) X(cuGraphInstantiateWithFlags) X(cuGraphLaunch)          \
              X(cuGraphDestroy) X(cuGraphExecDestroy) X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) \
                  X(cuMemsetD8) X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuLaunchKernel)

class TestDriver {
 public:
  /// Loads the driver (throws DriverError without one) and resolves the entries above.
  static TestDriver& get() {
    static TestDriver driver;
    return driver;
  }
  [[noreturn]] void fail(CUresult result, const char* call, const std::string& context) const {
    detail::Driver::get().fail(result, call, context);
  }
  std::pair<int, int> compute_capability(CUdevice device) { return detail::Driver::get().compute_capability(device); }

#define TRITONRT_TEST_DRIVER_FIELD(name) decltype(&::name) name = nullptr;
  TRITONRT_TEST_DRIVER_ENTRIES(TRITONRT_TEST_DRIVER_FIELD)
#undef TRITONRT_TEST_DRIVER_FIELD

 private:
  TestDriver() {
    auto& driver = detail::Driver::get();
#define TRITONRT_TEST_DRIVER_RESOLVE(name) name = reinterpret_cast<decltype(name)>(driver.entry(#name));
    TRITONRT_TEST_DRIVER_ENTRIES(TRITONRT_TEST_DRIVER_RESOLVE)
#undef TRITONRT_TEST_DRIVER_RESOLVE
  }
};

}  // namespace tritonrt::test

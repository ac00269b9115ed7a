// The CUDA driver, loaded with dlopen on first use: the library links no libcuda, loads on
// a machine without one, and reports its absence as a DriverError when a GPU is needed.
#pragma once

#include <cuda.h>

#include <string>
#include <utility>

namespace tritonrt::detail {

class Driver {
 public:
  /// Loads libcuda and calls cuInit once; throws DriverError when either fails.
  static Driver& get();

  CUdevice current_device();
  std::pair<int, int> compute_capability(CUdevice device);

  /// Throws DriverError for `result`, naming the failed call and what it was for.
  [[noreturn]] void fail(CUresult result, const char* call, const std::string& context) const;

#define TRITONRT_DRIVER_ENTRY(name) decltype(&::name) name = nullptr;
#include "driver/entries.inc"
#undef TRITONRT_DRIVER_ENTRY

 private:
  Driver();
};

}  // namespace tritonrt::detail

/// Checks a driver call; the message (with `context`, evaluated lazily) is built only on failure.
#define TRITONRT_CU_CHECK(driver, call, context)                       \
  do {                                                                 \
    const CUresult tritonrt_result_ = (driver).call;                   \
    if (tritonrt_result_ != CUDA_SUCCESS) [[unlikely]]                 \
      (driver).fail(tritonrt_result_, #call, (context));               \
  } while (0)

// The CUDA driver, loaded with dlopen on first use: the library links no libcuda, loads on
// a machine without one, and reports its absence as a DriverError when a GPU is needed.
#pragma once

#include <cuda.h>

#include <atomic>
#include <string>
#include <utility>

namespace tritonrt::detail {

class Driver {
 public:
  /// Loads libcuda and calls cuInit once; throws DriverError when either fails. Inline:
  /// every launch asks, and after the first call it is one load.
  static Driver& get() {
    if (Driver* d = loaded_.load(std::memory_order_acquire)) [[likely]]
      return *d;
    return load();
  }

  /// The device of the calling thread's current context (device 0 when it has none).
  CUdevice current_device();
  /// The device's compute capability (major, minor).
  std::pair<int, int> compute_capability(CUdevice device);

  /// Any driver entry point by its API name, with the prototype cuda.h gives it (resolved
  /// as the table's entries are); throws DriverError when the driver lacks it.
  void* entry(const char* name) const;

  /// Throws DriverError for `result`, naming the failed call and what it was for.
  [[noreturn]] void fail(CUresult result, const char* call, const std::string& context) const;

#define TRITONRT_DRIVER_ENTRY(name) decltype(&::name) name = nullptr;
#include "driver/entries.inc"
#undef TRITONRT_DRIVER_ENTRY

 private:
  Driver();
  [[gnu::cold]] static Driver& load();
  static inline std::atomic<Driver*> loaded_{nullptr};
  using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  GetProcAddress get_proc_ = nullptr;
};

}  // namespace tritonrt::detail

/// Checks a driver call; the message (with `context`, evaluated lazily) is built only on failure.
#define TRITONRT_CU_CHECK(driver, call, context)         \
  do {                                                   \
    const CUresult tritonrt_result_ = (driver).call;     \
    if (tritonrt_result_ != CUDA_SUCCESS) [[unlikely]]   \
      (driver).fail(tritonrt_result_, #call, (context)); \
  } while (0)

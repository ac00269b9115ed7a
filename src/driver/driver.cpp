#include "driver/driver.h"

#include <dlfcn.h>

#include "common/errors.h"
#include "tritonrt/options.h"

namespace tritonrt::detail {

Driver& Driver::load() {
  static Driver driver;  // thread-safe; a failed load throws and is retried next time
  loaded_.store(&driver, std::memory_order_release);
  return driver;
}

Driver::Driver() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    raise_driver(CUDA_ERROR_NO_DEVICE,
                 "the CUDA driver (libcuda.so.1) could not be loaded: {}; a GPU and its driver are needed to launch "
                 "kernels",
                 why ? why : "unknown reason");
  }
  get_proc_ = reinterpret_cast<GetProcAddress>(dlsym(lib, "cuGetProcAddress_v2"));
  if (get_proc_ == nullptr) {
    raise_driver(CUDA_ERROR_NOT_SUPPORTED,
                 "the CUDA driver is too old (no cuGetProcAddress_v2); CUDA 12 or newer is needed");
  }
#define TRITONRT_DRIVER_ENTRY(name) name = reinterpret_cast<decltype(name)>(entry(#name));
#include "driver/entries.inc"
#undef TRITONRT_DRIVER_ENTRY
  TRITONRT_CU_CHECK(*this, cuInit(0), "initializing the CUDA driver");
}

void* Driver::entry(const char* name) const {
  // Resolve at CUDA 12.0: the prototypes cuda.h gives our entries (cuMemAlloc -> _v2, legacy
  // cuStreamGetCtx and cuCtxGetDevice) are the 12.0 ones; asking at the headers' own version
  // would hand back later variants with other signatures (cuStreamGetCtx_v2 takes 3 arguments).
  constexpr int kEntryVersion = 12000;
  void* slot = nullptr;
  CUdriverProcAddressQueryResult status{};
  const CUresult r = get_proc_(name, &slot, kEntryVersion, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  if (r != CUDA_SUCCESS || slot == nullptr) {
    raise_driver(r, "the CUDA driver lacks entry point {}", name);
  }
  return slot;
}

void Driver::fail(CUresult result, const char* call, const std::string& context) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName == nullptr || cuGetErrorName(result, &name) != CUDA_SUCCESS) name = "CUDA_ERROR_UNKNOWN";
  if (cuGetErrorString == nullptr || cuGetErrorString(result, &text) != CUDA_SUCCESS) text = "";
  raise_driver(static_cast<int>(result), "{}: {} failed with {} ({})", context, call, name, text);
}

CUdevice Driver::current_device() {
  CUcontext ctx = nullptr;
  TRITONRT_CU_CHECK(*this, cuCtxGetCurrent(&ctx), "querying the current context");
  CUdevice device = 0;
  if (ctx == nullptr) {
    TRITONRT_CU_CHECK(*this, cuDeviceGet(&device, 0), "selecting device 0");
  } else {
    TRITONRT_CU_CHECK(*this, cuCtxGetDevice(&device), "querying the current device");
  }
  return device;
}

std::pair<int, int> Driver::compute_capability(CUdevice device) {
  int major = 0;
  int minor = 0;
  TRITONRT_CU_CHECK(*this, cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
                    "reading the compute capability");
  TRITONRT_CU_CHECK(*this, cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
                    "reading the compute capability");
  return {major, minor};
}

}  // namespace tritonrt::detail

namespace tritonrt {

// The driver knows the current device, so the one Target member that needs it lives here.
Target Target::current() {
  auto& driver = detail::Driver::get();
  const auto [major, minor] = driver.compute_capability(driver.current_device());
  return Target::cuda(major, minor);
}

}  // namespace tritonrt

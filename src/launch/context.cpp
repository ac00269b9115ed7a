#include "launch/context.h"

#include "driver/driver.h"

namespace tritonrt::detail {

ScopedContext::ScopedContext(CUcontext ctx) {
  TRITONRT_CU_CHECK(Driver::get(), cuCtxPushCurrent(ctx), "entering a device context");
}

ScopedContext::~ScopedContext() {
  CUcontext popped = nullptr;
  (void)Driver::get().cuCtxPopCurrent(&popped);
}

CUcontext launch_context(void* stream) {
  auto& d = Driver::get();
  CUcontext ctx = nullptr;
  if (stream != nullptr) {
    TRITONRT_CU_CHECK(d, cuStreamGetCtx(static_cast<CUstream>(stream), &ctx), "finding the launch stream's context");
    return ctx;
  }
  TRITONRT_CU_CHECK(d, cuCtxGetCurrent(&ctx), "querying the current context");
  if (ctx == nullptr) {
    CUdevice device = 0;
    TRITONRT_CU_CHECK(d, cuDeviceGet(&device, 0), "selecting device 0");
    TRITONRT_CU_CHECK(d, cuDevicePrimaryCtxRetain(&ctx, device), "retaining device 0's primary context");
    TRITONRT_CU_CHECK(d, cuCtxSetCurrent(ctx), "making device 0's primary context current");
  }
  return ctx;
}

DeviceContext DeviceContext::describe(CUcontext ctx) {
  auto& d = Driver::get();
  DeviceContext dc;
  dc.context = ctx;
  {
    ScopedContext in(ctx);
    TRITONRT_CU_CHECK(d, cuCtxGetDevice(&dc.device), "finding a context's device");
  }
  const auto [major, minor] = d.compute_capability(dc.device);
  dc.target = Target::cuda(major, minor);
  const CUdevice_attribute grid_attrs[3] = {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
                                            CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z};
  for (int i = 0; i < 3; ++i) {
    TRITONRT_CU_CHECK(d, cuDeviceGetAttribute(&dc.max_grid[i], grid_attrs[i], dc.device), "reading grid limits");
  }
  TRITONRT_CU_CHECK(
      d, cuDeviceGetAttribute(&dc.max_shared_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dc.device),
      "reading the shared memory limit");
  TRITONRT_CU_CHECK(d, cuDeviceGetAttribute(&dc.multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dc.device),
                    "reading the multiprocessor count");
  return dc;
}

}  // namespace tritonrt::detail

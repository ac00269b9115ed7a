#include "launch/module.h"

#include "common/errors.h"
#include "common/trace.h"
#include "driver/driver.h"

namespace tritonrt::detail {

ModuleHandle::~ModuleHandle() {
  // Best effort: at process exit the context may already be gone.
  if (module != nullptr) (void)Driver::get().cuModuleUnload(module);
}

ModuleFunction load_function(const DeviceContext& dc, std::shared_ptr<const Artifact> artifact,
                             std::string_view kernel) {
  auto& d = Driver::get();
  const auto& m = artifact->metadata;
  const ErrorSite site{kernel};
  if (artifact->binary_kind != "cubin") {
    raise<TargetError>(site, "cannot launch a {} binary (built for {}) on CUDA device {}", artifact->binary_kind,
                       m.target.str(), dc.device);
  }
  const std::string on_device = "on device " + std::to_string(dc.device);
  if (m.shared > dc.max_shared_optin) {
    raise<ResourceError>(site, "needs {} bytes of shared memory {}, which allows {}", m.shared, on_device,
                         dc.max_shared_optin);
  }
  const std::string where = "kernel '" + std::string(kernel) + "' " + on_device;
  ScopedContext in(dc.context);
  ModuleFunction f;
  CUmodule module = nullptr;
  {
    Traced traced(site, "loading its module {}", on_device);
    TRITONRT_CU_CHECK(d, cuModuleLoadData(&module, artifact->binary.data()), "loading " + where);
  }
  f.module = std::make_unique<ModuleHandle>(module);
  TRITONRT_CU_CHECK(d, cuModuleGetFunction(&f.function, module, m.name.c_str()), "finding " + where);
  int max_threads = 0;
  TRITONRT_CU_CHECK(d, cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f.function),
                    "querying " + where);
  const long threads = static_cast<long>(m.num_warps) * m.target.warp_size;
  if (threads > max_threads) {
    raise<ResourceError>(site, "needs {} threads per block {}; it can run with at most {}", threads, on_device,
                         max_threads);
  }
  if (m.shared > 49152 && dc.max_shared_optin > 49152) {
    // Beyond 48 KiB, dynamic shared memory must be opted into, as Triton's loader does.
    int shared_static = 0;
    TRITONRT_CU_CHECK(d, cuFuncSetCacheConfig(f.function, CU_FUNC_CACHE_PREFER_SHARED), "configuring " + where);
    TRITONRT_CU_CHECK(d, cuFuncGetAttribute(&shared_static, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f.function),
                      "querying " + where);
    TRITONRT_CU_CHECK(d,
                      cuFuncSetAttribute(f.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         dc.max_shared_optin - shared_static),
                      "opting " + where + " into large shared memory");
  }
  if (m.num_ctas == 16) {
    TRITONRT_CU_CHECK(d, cuFuncSetAttribute(f.function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
                      "allowing " + where + " a non-portable cluster size");
  }
  f.block_x = static_cast<unsigned>(threads);
  f.shared = static_cast<unsigned>(m.shared);
  f.num_ctas = m.num_ctas;
  f.launch_pdl = m.launch_pdl;
  f.launch_cooperative_grid = m.launch_cooperative_grid;
  f.global_scratch_size = m.global_scratch_size;
  f.global_scratch_align = m.global_scratch_align;
  f.profile_scratch_size = m.profile_scratch_size;
  f.profile_scratch_align = m.profile_scratch_align;
  f.plain = f.num_ctas == 1 && !f.launch_pdl && !f.launch_cooperative_grid && f.global_scratch_size == 0 &&
            f.profile_scratch_size == 0;
  f.artifact = std::move(artifact);
  return f;
}

}  // namespace tritonrt::detail

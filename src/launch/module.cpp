#include "launch/module.h"

#include <algorithm>

#include "common/errors.h"
#include "common/trace.h"
#include "driver/driver.h"

namespace tritonrt::detail {

ModuleHandle::~ModuleHandle() {
  // Best effort: at process exit the context may already be gone.
  if (module != nullptr) (void)Driver::get().cuModuleUnload(module);
}

namespace {

// The kernel's tensor-descriptor parameters (types "tensordesc<fp16[64, 64]>"), each with the
// TMA encoding its metadata gives, one per descriptor or none.
// How many kernel parameters a tuple's runtime elements are (descriptors are never among them).
std::size_t runtime_elements(const ParamSpec& tuple) {
  std::size_t n = 0;
  for (const ParamSpec& e : tuple.elements) n += e.is_tuple() ? runtime_elements(e) : e.type != "constexpr";
  return n;
}

std::vector<DescriptorParam> descriptor_params(const Artifact& artifact, int flags, const ErrorSite& site) {
  std::vector<DescriptorParam> out;
  std::size_t position = 0;
  for (const ParamSpec& p : artifact.specialization.params) {
    if (p.type == "constexpr") continue;
    if (p.is_tuple()) {
      position += runtime_elements(p);
      continue;
    }
    if (p.type.starts_with("tensordesc<")) {
      const auto open = p.type.find('[');
      const auto close = p.type.find(']', open);
      if (open == std::string::npos || close == std::string::npos) {
        raise<ArtifactError>(site, "its specialization names a descriptor type without block shape: {}", p.type);
      }
      const auto dims = p.type.substr(open + 1, close - open - 1);
      out.push_back({position, static_cast<int>(std::count(dims.begin(), dims.end(), ',')) + 1, nullptr, flags});
    }
    ++position;
  }
  const auto& metas = artifact.metadata.tensordesc_meta;
  if (!metas.empty()) {
    if (metas.size() != out.size()) {
      raise<ArtifactError>(site, "its metadata describes {} TMA descriptors, but it takes {} descriptor arguments",
                           metas.size(), out.size());
    }
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (static_cast<int>(metas[i].block_size.size()) != out[i].rank) {
        raise<ArtifactError>(site, "its metadata gives descriptor {} a block of rank {}, its type rank {}", i,
                             metas[i].block_size.size(), out[i].rank);
      }
      out[i].tma = &metas[i];
    }
  }
  if (out.size() > kMaxDescriptors) {
    raise<ResourceError>(site, "takes {} tensor descriptors; tritonrt launches kernels with up to {}", out.size(),
                         kMaxDescriptors);
  }
  return out;
}

}  // namespace

ModuleFunction load_function(const DeviceContext& dc, std::shared_ptr<const Artifact> artifact, std::string_view kernel,
                             int descriptor_flags) {
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
  f.descriptors = descriptor_params(*artifact, descriptor_flags, site);
  f.plain = f.num_ctas == 1 && !f.launch_pdl && !f.launch_cooperative_grid && f.global_scratch_size == 0 &&
            f.profile_scratch_size == 0 && f.descriptors.empty();
  f.artifact = std::move(artifact);
  return f;
}

}  // namespace tritonrt::detail

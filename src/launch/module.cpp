#include "launch/module.h"

#include "common/errors.h"
#include "common/specialization.h"
#include "common/trace.h"
#include "driver/driver.h"

namespace tritonrt::detail {

ModuleHandle::~ModuleHandle() {
  // Best effort: at process exit the context may already be gone.
  if (module != nullptr) (void)Driver::get().cuModuleUnload(module);
}

namespace {

// The kernel's tensor-descriptor parameters (types "tensordesc<fp16[64, 64]>"), with those
// inside tuples where Triton's launcher flattens them (depth first), each with the TMA
// encoding its metadata gives, one per descriptor in that order, or none.
struct DescriptorWalk {
  const SpecializationRules& rules;
  const KernelSignature& signature;
  std::vector<DescriptorParam> found;
  std::size_t position = 0;  // among the runtime arguments, tuples flattened

  void visit(const ParamSpec& p, std::size_t index, bool in_tuple) {
    if (p.is_tuple()) {
      for (const ParamSpec& e : p.elements) visit(e, index, true);
      return;
    }
    if (p.type == "constexpr") return;
    if (p.type.starts_with("tensordesc<")) {
      const ErrorSite site = param_site(signature, index);
      if (in_tuple && !rules.descriptors_in_tuples) {
        raise<ArgumentError>(site,
                             "holds a tensor descriptor inside a tuple, which Triton {}'s launcher cannot launch (it "
                             "expands descriptor parameters only: a TMA kernel fails its assertion, any other would "
                             "be passed the descriptor unexpanded); Triton 3.9 launches it. Pass the descriptor as a "
                             "parameter of its own",
                             rules.triton_version);
      }
      const auto block = p.descriptor_block_shape();
      if (block.empty()) {
        raise<ArtifactError>(site, "its specialization names a descriptor type without block shape: {}", p.type);
      }
      found.push_back({position, static_cast<int>(block.size()), nullptr, rules.descriptor_flags});
    }
    ++position;
  }
};

std::vector<DescriptorParam> descriptor_params(const Artifact& artifact, const KernelSignature& signature,
                                               const SpecializationRules& rules) {
  const ErrorSite site{signature.name};
  DescriptorWalk walk{rules, signature, {}};
  const auto& params = artifact.specialization.params;
  if (params.size() != signature.params.size()) {
    raise<ArtifactError>(site, "its specialization lists {} parameters, the kernel has {}", params.size(),
                         signature.params.size());
  }
  for (std::size_t i = 0; i < params.size(); ++i) walk.visit(params[i], i, false);
  std::vector<DescriptorParam> out = std::move(walk.found);
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

ModuleFunction load_function(const DeviceContext& dc, std::shared_ptr<const Artifact> artifact,
                             const KernelSignature& signature, const SpecializationRules& rules) {
  auto& d = Driver::get();
  const auto& m = artifact->metadata;
  const std::string_view kernel = signature.name;
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
  f.descriptors = descriptor_params(*artifact, signature, rules);
  f.plain = f.num_ctas == 1 && !f.launch_pdl && !f.launch_cooperative_grid && f.global_scratch_size == 0 &&
            f.profile_scratch_size == 0 && f.descriptors.empty();
  f.artifact = std::move(artifact);
  return f;
}

}  // namespace tritonrt::detail

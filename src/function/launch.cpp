// JitFunction's launch path. The cache hit, in launch_packed, is this file's first screen:
// specialize and pack in one pass, find the context's entry without a lock, launch. A miss
// goes out of line to Impl::load.

#include "common/errors.h"
#include "function/jit_function_impl.h"
#include "launch/launcher.h"

namespace tritonrt {

void JitFunction::launch_packed(const LaunchConfig& config, std::span<const Arg> given) {
  detail::CallFrame call;
  const detail::OptionsKey options(config.options);
  impl_->prepare(signature_, given, options, call);
  const CUcontext ctx = detail::launch_context(config.stream);
  const detail::CacheEntry* entry = impl_->find(ctx, options, call);
  if (entry == nullptr) [[unlikely]] entry = &impl_->load(*this, config, ctx, options, call);
  const Grid grid = config.grid_fn ? config.grid_fn(BoundArgs(signature_, call.args)) : config.grid;
  detail::launch_kernel(entry->kernel, call.context->device, grid, call.kernel_params, call.kernel_param_count,
                        config.stream, signature_.name);
}

std::shared_ptr<const Artifact> JitFunction::artifact_for_packed(const LaunchConfig& config, std::span<const Arg> given) {
  detail::CallFrame call;
  const detail::OptionsKey options(config.options);
  impl_->prepare(signature_, given, options, call);
  const CUcontext ctx = detail::launch_context(config.stream);
  const detail::CacheEntry* entry = impl_->find(ctx, options, call);
  if (entry == nullptr) entry = &impl_->load(*this, config, ctx, options, call);
  return entry->kernel.artifact;
}

const detail::CacheEntry& JitFunction::Impl::load(JitFunction& fn, const LaunchConfig& config, CUcontext ctx,
                                                  const detail::OptionsKey& options, detail::CallFrame& call) {
  detail::GilReleased unlocked;  // the compile may need the GIL another thread waits here with
  std::lock_guard lock(launch_mutex);
  if (call.context == nullptr) {
    // First launch in this context: describe it (another thread may have meanwhile).
    detail::ContextKernels* c = contexts.load(std::memory_order_relaxed);
    while (c != nullptr && c->device.context != ctx) c = c->next;
    if (c == nullptr) {
      auto created = std::make_unique<detail::ContextKernels>();
      created->device = detail::DeviceContext::describe(ctx);
      created->next = contexts.load(std::memory_order_relaxed);
      c = created.get();
      owned_contexts.push_back(std::move(created));
      contexts.store(c, std::memory_order_release);
    }
    call.context = c;
  }
  const auto codes = detail::padded_codes(call.codes, param_count);
  if (const auto* hit = call.context->table.find(call.hash, codes, call.args, options)) return *hit;
  auto artifact = fn.compile_packed(call.context->device.target, config.options, call.args);
  auto loaded = detail::load_function(call.context->device, std::move(artifact), fn.signature_.name);
  return call.context->table.insert(
      std::make_unique<detail::CacheEntry>(call.hash, codes, call.args, options, std::move(loaded)));
}

}  // namespace tritonrt

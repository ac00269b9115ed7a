// JitFunction's launch path. The cache hit, in launch_artifact, is this file's first screen:
// specialize and pack in one pass, find the context's entry without a lock, launch. A miss
// goes out of line to Impl::miss; a decorated kernel resolves its decorators first.

#include <list>

#include "common/errors.h"
#include "function/decorators.h"
#include "function/jit_function_impl.h"
#include "launch/launcher.h"

namespace tritonrt {

const Artifact& JitFunction::launch_artifact(const LaunchConfig& config, std::span<const Arg> given) {
  if (!impl_->kernel.layers.empty() | (config.autotune_config >= 0)) [[unlikely]]
    return launch_decorated(config, given);
  detail::CallFrame call;
  const detail::OptionsKey options(config.options);
  const CUcontext ctx = detail::launch_context(config.stream);
  detail::ContextKernels* context = impl_->context_of(ctx);
  const detail::CacheEntry* entry = context != nullptr ? context->last.load(std::memory_order_acquire) : nullptr;
  if (entry == nullptr || !impl_->matches(signature_, given, options, *entry, call)) [[unlikely]] {
    entry = impl_->find_or_load(config.options, ctx, options, given, call);
  }
  call.context = context != nullptr ? context : call.context;
  const Grid grid = config.grid_fn ? config.grid_fn(BoundArgs(signature_, call.args, &impl_->names)) : config.grid;
  detail::launch_kernel(entry->kernel, call.context->device, grid, call.kernel_params, call.kernel_param_count,
                        config.stream, signature_.name);
  return *entry->kernel.artifact;
}

// The same, after the decorators (autotune, heuristics) chose the values they set: as a call
// of the same form that read the same was resolved, where one was remembered whole, else
// layer by layer (then remembered, where every decorator answered from memory).
const Artifact& JitFunction::launch_decorated(const LaunchConfig& config, std::span<const Arg> given) {
  if (impl_->kernel.layers.empty()) impl_->check_chosen_config(config.autotune_config);  // throws: not autotuned
  detail::CallFrame call;
  const CUcontext ctx = detail::launch_context(config.stream);
  detail::ContextKernels& context = impl_->context_for(ctx);
  CompileOptions resolved = config.options;
  detail::Resolution r(impl_->kernel, call.bound(), resolved, *context.decorators, &context.device);
  r.launch = &config;
  if (impl_->cpp_decorators || !detail::recall(given, r)) [[unlikely]] {
    if (config.autotune_config >= 0) impl_->check_chosen_config(config.autotune_config);
    impl_->resolve(given, r);
    detail::remember(given, r);
  }
  const detail::OptionsKey options(resolved);
  const std::span<const Arg> args(call.bound(), impl_->param_count);
  const detail::CacheEntry* entry = context.last.load(std::memory_order_acquire);
  if (entry == nullptr || !impl_->matches(signature_, args, options, *entry, call)) [[unlikely]] {
    entry = impl_->find_or_load(resolved, ctx, options, args, call);
  }
  call.context = &context;
  const Grid grid = config.grid_fn ? config.grid_fn(BoundArgs(signature_, call.args, &impl_->names)) : config.grid;
  detail::launch_kernel(entry->kernel, call.context->device, grid, call.kernel_params, call.kernel_param_count,
                        config.stream, signature_.name);
  return *entry->kernel.artifact;
}

std::shared_ptr<const Artifact> JitFunction::artifact_for_packed(const LaunchConfig& config,
                                                                 std::span<const Arg> given) {
  detail::CallFrame call;
  const CUcontext ctx = detail::launch_context(config.stream);
  CompileOptions resolved = config.options;
  std::span<const Arg> args = given;
  if (config.autotune_config >= 0) impl_->check_chosen_config(config.autotune_config);
  std::list<TensorDescriptor> reshaped;  // descriptors a config's pre_hook reshaped, which `args` point at
  if (!impl_->kernel.layers.empty()) {
    detail::ContextKernels& context = impl_->context_for(ctx);
    detail::Resolution r(impl_->kernel, call.bound(), resolved, *context.decorators, &context.device);
    r.launch = &config;
    impl_->resolve(given, r);
    args = std::span<const Arg>(call.bound(), impl_->param_count);
    r.keep_descriptors(reshaped);
  }
  const detail::OptionsKey options(resolved);
  impl_->prepare(signature_, args, options, call);
  const detail::CacheEntry* entry = impl_->find(ctx, options, call);
  if (entry == nullptr) entry = &impl_->miss(resolved, ctx, options, call);
  return entry->kernel.artifact;
}

const detail::CacheEntry* JitFunction::Impl::find_or_load(const CompileOptions& options, CUcontext ctx,
                                                          const detail::OptionsKey& key, std::span<const Arg> given,
                                                          detail::CallFrame& call) {
  prepare(kernel.signature, given, key, call);
  const detail::CacheEntry* entry = find(ctx, key, call);
  if (entry == nullptr) entry = &miss(options, ctx, key, call);
  call.context->last.store(entry, std::memory_order_release);  // the next call checks against it first
  return entry;
}

detail::ContextKernels& JitFunction::Impl::context_for(CUcontext ctx) {
  if (detail::ContextKernels* c = context_of(ctx)) [[likely]]
    return *c;
  // First launch in this context: describe it (another thread may have meanwhile).
  detail::GilReleased unlocked;
  std::lock_guard lock(launch_mutex);
  if (detail::ContextKernels* c = context_of(ctx)) return *c;
  auto created = std::make_unique<detail::ContextKernels>();
  created->device = detail::DeviceContext::describe(ctx);
  if (!kernel.layers.empty()) created->decorators = std::make_unique<detail::DecoratorState>(kernel);
  return contexts.add(std::move(created));
}

const detail::CacheEntry& JitFunction::Impl::miss(const CompileOptions& options, CUcontext ctx,
                                                  const detail::OptionsKey& key, detail::CallFrame& call) {
  if (call.context == nullptr) call.context = &context_for(ctx);
  detail::GilReleased unlocked;  // the compile may need the GIL another thread waits here with
  std::lock_guard lock(launch_mutex);
  const detail::CallCodes codes = call.codes_of(param_count);
  if (const auto* hit = call.context->table.find(call.hash, codes, call.args, key)) return *hit;
  // Specialized once: the codes prepare made are the specialization compiled.
  auto artifact = compile_specialized(call.context->device.target, options, call.args,
                                      specialization_of(kernel.signature, call.args, call.codes));
  auto loaded = detail::load_function(call.context->device, std::move(artifact), kernel.signature, *triton_rules);
  return call.context->table.insert(
      std::make_unique<detail::CacheEntry>(call.hash, codes, call.args, key, std::move(loaded)));
}

std::size_t JitFunction::Impl::pack_tuple(const KernelSignature& sig, const Arg& tuple, std::size_t index,
                                          std::size_t count, detail::CallFrame& call) const {
  detail::TupleSink sink;
  sink.codes = call.tuple_codes + call.tuple_code_count;
  sink.code_capacity = detail::CallFrame::kMaxTupleCodes - call.tuple_code_count;
  sink.params = call.kernel_params + count;
  sink.param_capacity = kMaxParams - count;
  sink.slots = call.tuple_slots + count;  // one per runtime element at most: tuples never share one
  detail::specialize_tuple(*triton_rules, tuple, sig, index, sink);
  call.tuple_code_count += sink.code_count;
  return count + sink.param_count;
}

}  // namespace tritonrt

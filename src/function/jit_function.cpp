#include "tritonrt/jit_function.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "function/jit_function_impl.h"
#include "function/concurrent_compiles.h"
#include "common/compile_options.h"
#include "common/errors.h"
#include "common/record_key.h"
#include "common/specialization.h"

namespace tritonrt {

JitFunction& JitFunction::get(std::string_view source, std::string_view name) { return get(source, name, false); }

JitFunction& JitFunction::get(std::string_view source, std::string_view name, bool live) {
  // One slot per kernel: the registry's lock covers finding the slot only, and a kernel's
  // import holds its own slot's lock, so a get never waits for another kernel's import.
  struct Slot {
    std::mutex loading;
    std::atomic<JitFunction*> loaded{nullptr};
    std::unique_ptr<JitFunction> owned;
    std::vector<std::unique_ptr<JitFunction>> replaced;  ///< described before a redefinition: still held by callers
  };
  static std::mutex registry_mutex;
  static std::map<std::pair<std::string, std::string>, std::unique_ptr<Slot>> registry;
  // Spellings of one file ("k.py", "./k.py") share one JitFunction and its caches.
  std::string key_source(source);
  if (key_source.ends_with(".py")) {
    std::error_code ec;
    const auto canonical = std::filesystem::weakly_canonical(key_source, ec);
    if (!ec) key_source = canonical.string();
  }
  Slot* slot = nullptr;
  {
    std::lock_guard lock(registry_mutex);
    auto& entry = registry[std::make_pair(key_source, std::string(name))];
    if (entry == nullptr) entry = std::make_unique<Slot>();
    slot = entry.get();
  }
  // A live get takes the loaded kernel only where Python described it and its module still
  // holds that object.
  const auto usable = [live](JitFunction* fn) {
    return fn != nullptr && (!live || detail::is_current(fn->impl_->kernel));
  };
  if (JitFunction* fn = slot->loaded.load(std::memory_order_acquire); usable(fn)) return *fn;
  detail::GilReleased unlocked;  // importing needs the GIL; never wait for a lock holding it
  std::lock_guard lock(slot->loading);
  if (!usable(slot->owned.get())) {
    // A failed import throws and leaves the slot as it was: the next get tries again.
    std::unique_ptr<JitFunction> made(new JitFunction(live ? detail::live_kernel_description(key_source, name)
                                                           : detail::kernel_description(key_source, name)));
    if (slot->owned != nullptr) slot->replaced.push_back(std::move(slot->owned));
    slot->owned = std::move(made);
    slot->loaded.store(slot->owned.get(), std::memory_order_release);
  }
  return *slot->owned;
}

JitFunction::JitFunction(detail::KernelDescription kernel) : impl_(std::make_unique<Impl>()) {
  impl_->kernel = std::move(kernel);
  impl_->triton_rules = impl_->kernel.rules.get();
  impl_->param_count = impl_->kernel.signature.params.size();
  impl_->names = detail::ParamNames(impl_->kernel.signature);
  signature_ = impl_->kernel.signature;
  std::size_t heuristics = 0;
  for (const auto& layer : impl_->kernel.layers) heuristics += layer.heuristic_names.size();
  impl_->cpp_heuristics.resize(heuristics);
  if (!impl_->kernel.layers.empty()) impl_->host_decorators = std::make_unique<detail::DecoratorState>(impl_->kernel);
  if (signature_.params.size() > kMaxParams) {
    detail::raise<ArgumentError>({signature_.name}, "has {} parameters; tritonrt supports up to {}",
                                 signature_.params.size(), kMaxParams);
  }
}

JitFunction::~JitFunction() = default;

// A decorated kernel's arguments for an explicit target: its heuristics applied (memoized
// apart from any device's); an autotuner there is an error (tuning needs a GPU).
struct JitFunction::ResolvedArgs {
  detail::CallFrame frame;
  std::span<const Arg> args;
  CompileOptions options;
  std::list<TensorDescriptor> descriptors;  ///< those a config's pre_hook reshaped, which `args` point at
};

std::unique_ptr<JitFunction::ResolvedArgs> JitFunction::resolve_for_target(const CompileOptions& options,
                                                                           std::span<const Arg> given) {
  auto out = std::make_unique<ResolvedArgs>();
  out->options = options;
  out->args = given;
  if (impl_->kernel.layers.empty()) return out;
  detail::Resolution r(impl_->kernel, out->frame.bound(), out->options, *impl_->host_decorators, nullptr);
  impl_->resolve(given, r);
  out->args = std::span<const Arg>(out->frame.bound(), impl_->param_count);
  r.keep_descriptors(out->descriptors);
  return out;
}

Specialization JitFunction::specialize_packed(std::span<const Arg> given) const {
  const auto resolved = const_cast<JitFunction*>(this)->resolve_for_target({}, given);
  return impl_->specialize(signature_, resolved->args);
}

Specialization JitFunction::Impl::specialize(const KernelSignature& sig, std::span<const Arg> args) const {
  const auto& rules = *triton_rules;
  std::array<Arg, kMaxParams> bound;
  detail::bind_arguments(sig, kernel.defaults, args, bound.data());
  const detail::HotRules hot(rules);
  std::array<detail::ParamCode, kMaxParams> codes;
  for (std::size_t i = 0; i < sig.params.size(); ++i) {
    codes[i] = detail::specialize_argument(rules, hot, kernel.param_rules[i], bound[i], sig, i);
  }
  return specialization_of(sig, std::span<const Arg>(bound.data(), sig.params.size()), codes.data());
}

Specialization JitFunction::Impl::specialization_of(const KernelSignature& sig, std::span<const Arg> bound,
                                                    const detail::ParamCode* codes) const {
  Specialization spec;
  spec.params.reserve(sig.params.size());
  for (std::size_t i = 0; i < sig.params.size(); ++i) {
    if (codes[i].type == detail::TypeCode::kTuple) {
      spec.params.push_back(detail::tuple_spec(*triton_rules, bound[i], sig, i));
      continue;
    }
    ParamSpec p;
    p.type = detail::TypeCode::is_descriptor(codes[i].type) ? detail::descriptor_type(bound[i], triton_rules)
                                                            : detail::type_name(*triton_rules, codes[i].type);
    p.key = codes[i].key;
    if (codes[i].type == detail::TypeCode::kConstexpr) {
      // An integer specialized to the constexpr 1 prints as 1 whatever its C++ type.
      p.value = detail::python_repr(bound[i], sig.params[i]);
    }
    spec.params.push_back(std::move(p));
  }
  return spec;
}

std::shared_ptr<const Artifact> JitFunction::compile_packed(const Target& target, const CompileOptions& options,
                                                            std::span<const Arg> given) {
  const auto resolved = resolve_for_target(options, given);
  return impl_->compile(signature_, target, resolved->options, resolved->args);
}

std::vector<ConfigArtifact> JitFunction::compile_configs_packed(const Target& target, const CompileOptions& options,
                                                                std::span<const Arg> given) {
  auto& layers = impl_->kernel.layers;
  const auto tuner =
      std::find_if(layers.begin(), layers.end(), [](const auto& l) { return l.kind == Decorator::Kind::autotune; });
  if (tuner == layers.end()) detail::raise<ArgumentError>({signature_.name}, "is not autotuned: it has no configs");
  const auto layer = static_cast<std::size_t>(tuner - layers.begin());
  // Each config the autotuner would try (after its pruning), with the decorators outside it
  // and under it applied as a launch would apply them.
  std::vector<Arg> outer(impl_->param_count);
  CompileOptions outer_options = options;
  detail::Resolution r(impl_->kernel, outer.data(), outer_options, *impl_->host_decorators, nullptr);
  r.cpp_heuristics = &impl_->cpp_heuristics;
  r.cpp_config_hook = &impl_->cpp_config_hook;
  r.names = &impl_->names;
  detail::bind_call(given, r);
  impl_->apply_layers(0, layer, r);
  const detail::Autotune autotune(impl_->kernel, layer);
  const std::vector<std::size_t> candidates = autotune.candidates(r);
  std::vector<std::vector<Arg>> config_args(candidates.size(), outer);
  std::vector<CompileOptions> config_options(candidates.size(), outer_options);
  // Each config's resolution lives until its compile: it holds the descriptors its hook reshaped.
  std::vector<std::unique_ptr<detail::Resolution>> trials;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    detail::Resolution& trial =
        *trials.emplace_back(std::make_unique<detail::Resolution>(config_args[i].data(), config_options[i], r));
    autotune.apply(candidates[i], trial);
    // As a launch's trial: with descriptors, the config's hook sets their block shapes.
    if (trial.has_descriptors()) autotune.config_hook(candidates[i], trial);
    impl_->apply_layers(layer + 1, layers.size(), trial);
    detail::fill_unset(trial);
  }
  // The configs compile at once (function/concurrent_compiles.h).
  std::vector<ConfigArtifact> out(candidates.size());
  const auto errors = detail::run_concurrently(candidates.size(), [&](std::size_t i) {
    out[i].artifact = impl_->compile(signature_, target, config_options[i], std::span<const Arg>(config_args[i]));
  });
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    out[i].config = tuner->configs[candidates[i]].text;
    if (!errors[i]) continue;
    try {
      std::rethrow_exception(errors[i]);
    } catch (const CompileError& e) {
      out[i].error = e.what();
    }
  }
  return out;
}

void JitFunction::set_heuristic(std::string_view name, std::function<Arg(const BoundArgs&)> heuristic) {
  std::size_t memo = 0;
  for (const auto& layer : impl_->kernel.layers) {
    for (const auto& h : layer.heuristic_names) {
      if (h == name) {
        impl_->cpp_heuristics[memo] = std::move(heuristic);
        impl_->note_cpp_decorators();
        return;
      }
      ++memo;
    }
  }
  detail::raise<ArgumentError>({signature_.name}, "has no heuristic for '{}'", name);
}

std::shared_ptr<const Artifact> JitFunction::Impl::compile(const KernelSignature& sig, const Target& target,
                                                           const CompileOptions& options, std::span<const Arg> args) {
  std::array<Arg, kMaxParams> bound;
  detail::bind_arguments(sig, kernel.defaults, args, bound.data());
  const std::span<const Arg> all(bound.data(), sig.params.size());
  return compile_specialized(target, options, all, specialize(sig, all));
}

std::shared_ptr<const Artifact> JitFunction::Impl::compile_specialized(const Target& target,
                                                                       const CompileOptions& options,
                                                                       std::span<const Arg> bound,
                                                                       Specialization spec) {
  std::vector<detail::CompileParam> params(bound.size());
  for (std::size_t i = 0; i < params.size(); ++i) params[i] = {&spec.params[i], bound[i]};
  // Keyed by the options as Triton resolves them: a call that spells out a default shares the
  // artifact (here, in the index and in bundles) of one that leaves it unset.
  const std::string key =
      detail::RecordKey::artifact(target.str(), detail::options_words(detail::effective_options(options, target)),
                                  spec.repr())
          .text();

  detail::GilReleased unlocked;  // waiting on another thread's compilation must not hold the GIL
  std::promise<std::shared_ptr<const Artifact>> promise;
  std::shared_future<std::shared_ptr<const Artifact>> future;
  bool owner = false;
  {
    std::lock_guard lock(compile_mutex);
    auto it = compiled.find(key);
    if (it == compiled.end()) {
      future = promise.get_future().share();
      compiled.emplace(key, future);
      owner = true;
    } else {
      future = it->second;
    }
  }
  if (owner) {
    try {
      auto artifact = std::make_shared<Artifact>(detail::compile(kernel, target, options, params, key));
      artifact->specialization = std::move(spec);
      artifact->key = key;
      promise.set_value(std::move(artifact));
    } catch (...) {
      // A failed compilation is not cached: the next call tries again, as Triton does.
      {
        std::lock_guard lock(compile_mutex);
        compiled.erase(key);
      }
      promise.set_exception(std::current_exception());
    }
  }
  return future.get();
}

void JitFunction::set_config_hook(std::function<void(const BoundArgs&, BlockShapes&)> hook) {
  if (std::none_of(impl_->kernel.layers.begin(), impl_->kernel.layers.end(),
                   [](const auto& l) { return l.kind == Decorator::Kind::autotune; })) {
    detail::raise<ArgumentError>({signature_.name}, "is not autotuned: it has no configs for a config hook");
  }
  impl_->cpp_config_hook = std::move(hook);
  impl_->note_cpp_decorators();
}

}  // namespace tritonrt

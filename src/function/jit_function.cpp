#include "tritonrt/jit_function.h"

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>

#include "function/jit_function_impl.h"
#include "common/compile_options.h"
#include "common/errors.h"
#include "common/specialization.h"

namespace tritonrt {

JitFunction& JitFunction::get(std::string_view source, std::string_view name) {
  // One slot per kernel: the registry's lock covers finding the slot only, and a kernel's
  // import holds its own slot's lock, so a get never waits for another kernel's import.
  struct Slot {
    std::mutex loading;
    std::atomic<JitFunction*> loaded{nullptr};
    std::unique_ptr<JitFunction> owned;
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
  if (JitFunction* fn = slot->loaded.load(std::memory_order_acquire)) return *fn;
  detail::GilReleased unlocked;  // importing needs the GIL; never wait for a lock holding it
  std::lock_guard lock(slot->loading);
  if (slot->owned == nullptr) {
    // A failed import throws and leaves the slot empty: the next get tries again.
    slot->owned.reset(new JitFunction(key_source, name));
    slot->loaded.store(slot->owned.get(), std::memory_order_release);
  }
  return *slot->owned;
}

JitFunction::JitFunction(std::string_view source, std::string_view name) : impl_(std::make_unique<Impl>()) {
  impl_->kernel = detail::load_kernel(source, name);
  impl_->triton_rules = &detail::specialization_rules();
  impl_->param_count = impl_->kernel.signature.params.size();
  signature_ = impl_->kernel.signature;
  if (signature_.params.size() > detail::kMaxParams) {
    detail::raise<ArgumentError>({signature_.name}, "has " + std::to_string(signature_.params.size()) +
                                                        " parameters; tritonrt supports up to " +
                                                        std::to_string(detail::kMaxParams));
  }
}

JitFunction::~JitFunction() = default;

Specialization JitFunction::specialize_packed(std::span<const Arg> args) const {
  const auto& sig = signature_;
  const auto& param_rules = impl_->kernel.param_rules;
  const auto& triton_rules = *impl_->triton_rules;
  std::array<Arg, detail::kMaxParams> bound;
  detail::bind_arguments(sig, impl_->kernel.defaults, args, bound.data());
  const detail::HotRules hot(triton_rules);
  Specialization spec;
  spec.params.reserve(sig.params.size());
  for (std::size_t i = 0; i < sig.params.size(); ++i) {
    const auto code = detail::specialize_argument(triton_rules, hot, param_rules[i], bound[i], sig, i);
    ParamSpec p;
    p.type = detail::type_name(triton_rules, code.type);
    p.key = code.key;
    if (code.type == detail::TypeCode::kConstexpr) {
      // An integer specialized to the constexpr 1 prints as 1 whatever its C++ type.
      p.value = detail::python_repr(bound[i], sig.params[i]);
    }
    spec.params.push_back(std::move(p));
  }
  return spec;
}

std::shared_ptr<const Artifact> JitFunction::compile_packed(const Target& target, const CompileOptions& options,
                                                            std::span<const Arg> args) {
  const auto& sig = signature_;
  std::array<Arg, detail::kMaxParams> bound;
  detail::bind_arguments(sig, impl_->kernel.defaults, args, bound.data());
  Specialization spec = specialize_packed(std::span<const Arg>(bound.data(), sig.params.size()));
  std::vector<detail::CompileParam> params(sig.params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    params[i].type = spec.params[i].type;
    params[i].key = spec.params[i].key;
    params[i].value = bound[i];
  }
  const std::string key = target.str() + "|" + detail::OptionsKey(options).text() + "|" + spec.repr();

  detail::GilReleased unlocked;  // waiting on another thread's compilation must not hold the GIL
  std::promise<std::shared_ptr<const Artifact>> promise;
  std::shared_future<std::shared_ptr<const Artifact>> future;
  bool owner = false;
  {
    std::lock_guard lock(impl_->compile_mutex);
    auto it = impl_->compiled.find(key);
    if (it == impl_->compiled.end()) {
      future = promise.get_future().share();
      impl_->compiled.emplace(key, future);
      owner = true;
    } else {
      future = it->second;
    }
  }
  if (owner) {
    try {
      auto artifact = std::make_shared<Artifact>(
          detail::compile(impl_->kernel, target, options, params));
      artifact->specialization = std::move(spec);
      promise.set_value(std::move(artifact));
    } catch (...) {
      // A failed compilation is not cached: the next call tries again, as Triton does.
      {
        std::lock_guard lock(impl_->compile_mutex);
        impl_->compiled.erase(key);
      }
      promise.set_exception(std::current_exception());
    }
  }
  return future.get();
}

}  // namespace tritonrt

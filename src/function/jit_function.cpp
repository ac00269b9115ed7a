#include "tritonrt/jit_function.h"

#include <filesystem>

#include "function/jit_function_impl.h"
#include "common/compile_options.h"
#include "common/errors.h"
#include "common/specialization.h"

namespace tritonrt {


JitFunction& JitFunction::get(std::string_view source, std::string_view name) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, std::string>, std::unique_ptr<JitFunction>> registry;
  // Spellings of one file ("k.py", "./k.py") share one JitFunction and its caches.
  std::string key_source(source);
  if (key_source.ends_with(".py")) {
    std::error_code ec;
    const auto canonical = std::filesystem::weakly_canonical(key_source, ec);
    if (!ec) key_source = canonical.string();
  }
  detail::GilReleased unlocked;  // importing needs the GIL; never wait for the mutex holding it
  std::lock_guard lock(mutex);
  auto key = std::make_pair(key_source, std::string(name));
  auto it = registry.find(key);
  if (it == registry.end()) {
    it = registry.emplace(std::move(key), std::unique_ptr<JitFunction>(new JitFunction(key_source, name))).first;
  }
  return *it->second;
}

JitFunction::JitFunction(std::string_view source, std::string_view name) : impl_(std::make_unique<Impl>()) {
  auto& compiler = detail::Compiler::get();
  impl_->kernel = compiler.load_kernel(source, name);
  impl_->triton_rules = &compiler.rules();
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
          detail::Compiler::get().compile(impl_->kernel, target, options, params));
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

// A call of a decorated kernel, resolved as Triton's runtime resolves it: the call's
// arguments bound, then the decorators applied outermost first (heuristics.cpp, autotune.cpp),
// each seeing the values the ones outside it set, then defaults for what none set.

#include "function/decorators.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <new>
#include <type_traits>

#include "common/compile_options.h"
#include "common/hashing.h"
#include "function/autotune.h"
#include "function/concurrent_compiles.h"
#include "function/heuristics.h"
#include "function/jit_function_impl.h"
#include "launch/launcher.h"

namespace tritonrt::detail {

DecoratorState::DecoratorState(const KernelDescription& kernel) : tunings(kernel.layers.size()) {
  std::size_t heuristics = 0, configs = 0;
  for (const auto& layer : kernel.layers) {
    heuristics += layer.heuristic_names.size();
    first_config.push_back(configs);
    configs += layer.configs.size();
  }
  memos = std::vector<MemoTable>(heuristics);
  hooks = std::vector<MemoTable>(configs);
  hook_in_python = std::vector<std::atomic<bool>>(configs);
}

TensorShape shape_of(const Arg& a) {
  TensorShape shape;
  if (a.kind == ArgKind::pointer && a.source == ArgSource::tensor) {
    if (const auto inspect = tensor_inspector()) inspect(a.object, shape);
  }
  return shape;
}

bool same_other_value(const Arg& a, const Arg& b) {
  if (a.value_kind() != b.value_kind()) return false;
  if (a.kind == ArgKind::typed && a.dtype != b.dtype) return false;
  if (a.kind == ArgKind::pointer) return a.value.u == b.value.u && a.dtype == b.dtype && a.source == b.source;
  if (a.kind == ArgKind::dtype && a.source != b.source) return false;
  return same_constexpr(a, b);
}

Arg kept(const Arg& a, std::deque<std::string>& strings) {
  Arg copy = a;
  if (a.kind == ArgKind::string) {
    strings.emplace_back(a.value.s, a.size);
    copy.value.s = strings.back().data();
  }
  return copy;
}

bool set_option(CompileOptions& options, std::string_view name, const Arg& value, const ErrorSite& site) {
  bool found = false;
  for_each_option(options, [&](const char* option, auto& field) {
    if (name != option) return;
    found = true;
    using T = typename std::remove_reference_t<decltype(field)>::value_type;
    const ArgKind kind = value.value_kind();
    if constexpr (std::is_same_v<T, bool>) {
      if (kind != ArgKind::boolean) raise<ArgumentError>(site, "{} must be a bool, got {}", option, describe(value));
      field = value.value.u != 0;
    } else {
      const bool integer = kind == ArgKind::sint || kind == ArgKind::uint;
      if (!integer || value.value.i < 0 || value.value.i > std::numeric_limits<int>::max()) {
        raise<ArgumentError>(site, "{} must be a non-negative int, got {}", option, describe(value));
      }
      field = static_cast<int>(value.value.i);
    }
  });
  return found;
}

void merge_options(CompileOptions& into, const CompileOptions& from, const ErrorSite& site,
                   const std::function<std::string()>& by) {
#define TRITONRT_MERGE_OPTION(type, name)                                                              \
  if (from.name) {                                                                                     \
    if (into.name && *into.name != *from.name) {                                                       \
      raise<ArgumentError>(site, "{} is set by {}; the call's LaunchConfig sets it too", #name, by()); \
    }                                                                                                  \
    into.name = from.name;                                                                             \
  }
  TRITONRT_COMPILE_OPTIONS(TRITONRT_MERGE_OPTION)
#undef TRITONRT_MERGE_OPTION
}

namespace {

// The shapes of a tuple's elements, depth first (a tuple element's own slot stays empty).
void element_shapes(const Arg& tuple, std::vector<TensorShape>& shapes) {
  for (const Arg& e : tuple.elements()) {
    shapes.push_back(shape_of(e));
    if (e.kind == ArgKind::tuple) element_shapes(e, shapes);
  }
}

}  // namespace

std::vector<PythonArg> python_args(const Resolution& r, std::vector<TensorShape>& shapes) {
  std::vector<PythonArg> out;
  shapes.assign(r.count, TensorShape{});
  std::vector<std::size_t> first_element(r.count);
  for (std::size_t i = 0; i < r.count; ++i) {
    first_element[i] = shapes.size();
    if (r.args[i].kind == ArgKind::tuple) element_shapes(r.args[i], shapes);
  }
  for (std::size_t i = 0; i < r.count; ++i) {
    if (r.args[i].kind == ArgKind::unset) continue;
    shapes[i] = shape_of(r.args[i]);
    out.push_back({i, &r.args[i], shapes[i].dims >= 0 ? &shapes[i] : nullptr,
                   r.args[i].kind == ArgKind::tuple ? &shapes[first_element[i]] : nullptr});
  }
  return out;
}

void Resolution::reshape_descriptors(const BlockShapeChanges& changes) {
  for (const auto& [param, block] : changes) {
    if (param >= count || args[param].kind != ArgKind::descriptor) {
      raise<ArgumentError>(param_site(kernel.signature, param),
                           "was given a block shape by an autotune hook, but the call passes no tensor descriptor "
                           "there");
    }
    // The copy made where it is kept, then reshaped there (one copy, on the hit path).
    const auto& caller = *static_cast<const TensorDescriptor*>(args[param].object);
    static_assert(std::is_trivially_destructible_v<TensorDescriptor>, "kept in place without destruction");
    TensorDescriptor* reshaped =
        inline_count < kInlineDescriptors
            ? new (inline_descriptors + inline_count++ * sizeof(TensorDescriptor)) TensorDescriptor(caller)
            : &descriptors.emplace_back(caller);
    try {
      reshaped->set_block_shape(block);
    } catch (const ArgumentError& e) {
      raise<ArgumentError>(param_site(kernel.signature, param), "was given a block shape by an autotune hook: {}",
                           without_prefix(e.what()));
    }
    args[param].object = reshaped;
  }
}

void Resolution::keep_descriptors(std::list<TensorDescriptor>& into) {
  const auto first = reinterpret_cast<std::uintptr_t>(inline_descriptors);
  const auto last = first + inline_count * sizeof(TensorDescriptor);
  for (std::size_t i = 0; i < count; ++i) {
    const auto at = reinterpret_cast<std::uintptr_t>(args[i].object);
    if (args[i].kind != ArgKind::descriptor || at < first || at >= last) continue;
    into.push_back(*static_cast<const TensorDescriptor*>(args[i].object));
    args[i].object = &into.back();
  }
  inline_count = 0;
  into.splice(into.end(), descriptors);  // the nodes, so the addresses, stay
}

void bind_call(std::span<const Arg> given, Resolution& r) {
  const auto& kernel = r.kernel;
  const auto& call = kernel.call_params;
  const std::size_t params = kernel.signature.params.size();
  if (given.size() > call.size()) {
    // Passing what the decorators set (one chosen config, say) is a call of the kernel under
    // them, as Python's `kernel.fn[grid](...)`: named here by its attribute path.
    raise<ArgumentError>({kernel.signature.name},
                         "takes {} argument{} (its decorators set {} more), {} were given; to pass those too, get "
                         "the kernel under its decorators by its attribute path, as Python calls kernel.fn: "
                         "JitFunction::get(source, \"{}.fn\"), or SOURCE:{}.fn in the CLI (.fn once per decorator)",
                         call.size(), call.size() == 1 ? "" : "s", params - call.size(), given.size(),
                         kernel.signature.name, kernel.signature.name);
  }
  r.count = params;
  // Made once: an Arg built in the loop is stored a byte at a time and read back whole, a
  // store-forwarding stall per parameter (a tenth of a hooked descriptor call's host time).
  static constexpr Arg kUnset = [] {
    Arg a;
    a.kind = ArgKind::unset;
    return a;
  }();
  std::fill_n(r.passed, params, false);
  std::fill_n(r.args, params, kUnset);
  for (std::size_t i = 0; i < given.size(); ++i) r.pass(call[i], given[i]);
  for (std::size_t i = given.size(); i < call.size(); ++i) {
    const std::size_t p = call[i];
    if (!kernel.defaults[p]) {
      raise<ArgumentError>(param_site(kernel.signature, p),
                           "missing argument (the call passes {}, {} given, and this parameter has no default)",
                           call.size(), given.size());
    }
    r.args[p] = *kernel.defaults[p];  // a value for heuristics, but not passed: Triton leaves defaults out of keys
  }
}

void fill_unset(Resolution& r) {
  // A parameter no decorator set in this call (a config without it): its default, if any.
  for (std::size_t i = 0; i < r.count; ++i) {
    if (r.args[i].kind != ArgKind::unset) continue;
    if (!r.kernel.defaults[i]) {
      raise<ArgumentError>(param_site(r.kernel.signature, i),
                           "is set by a decorator, but none set it for this call and it has no default");
    }
    r.args[i] = *r.kernel.defaults[i];
  }
}

}  // namespace tritonrt::detail

namespace tritonrt {

void JitFunction::Impl::resolve(std::span<const Arg> given, detail::Resolution& r) {
  r.cpp_heuristics = &cpp_heuristics;
  r.cpp_config_hook = &cpp_config_hook;
  r.names = &names;
  detail::bind_call(given, r);
  apply_layers(0, kernel.layers.size(), r);
  detail::fill_unset(r);
}

void JitFunction::Impl::apply_layers(std::size_t first, std::size_t last, detail::Resolution& r) {
  std::size_t heuristic = 0;  // the number of the layer's first heuristic, over all layers
  for (std::size_t l = 0; l < first; ++l) heuristic += kernel.layers[l].heuristic_names.size();
  for (std::size_t l = first; l < last; ++l) {
    const auto& layer = kernel.layers[l];
    if (layer.kind == Decorator::Kind::heuristics) {
      detail::Heuristics(kernel, l, heuristic).apply(r);
      heuristic += layer.heuristic_names.size();
    } else if (layer.kind == Decorator::Kind::autotune) {
      const detail::Autotune tuner(kernel, l);
      // The caller's choice (checked before the call was resolved), else the tuner's.
      const std::size_t config = r.launch != nullptr && r.launch->autotune_config >= 0
                                     ? static_cast<std::size_t>(r.launch->autotune_config)
                                     : tuner.choose(r, *this);
      tuner.apply(config, r);
      tuner.config_hook(config, r);
    }
  }
}

void JitFunction::Impl::check_chosen_config(std::ptrdiff_t config) const {
  bool autotuned = false;
  for (const auto& layer : kernel.layers) {
    if (layer.kind != Decorator::Kind::autotune) continue;
    autotuned = true;
    if (static_cast<std::size_t>(config) >= layer.configs.size()) {
      detail::raise<ArgumentError>({kernel.signature.name},
                                   "LaunchConfig::autotune_config is {}, but its autotuner has {} config{}", config,
                                   layer.configs.size(), layer.configs.size() == 1 ? "" : "s");
    }
  }
  if (!autotuned) {
    detail::raise<ArgumentError>({kernel.signature.name},
                                 "LaunchConfig::autotune_config is {}, but the kernel is not autotuned", config);
  }
}

// A config's call, ready to launch while it is timed: its own arguments, options, frame and
// resolution (which hooks are shown), the kernel found or loaded for it.
struct JitFunction::Impl::Candidate final : detail::Trial {
  std::vector<Arg> args;
  CompileOptions options;
  std::unique_ptr<detail::Resolution> trial;
  detail::CallFrame frame;
  const detail::CacheEntry* entry = nullptr;
  Grid grid;
  void* stream = nullptr;
  std::string_view kernel_name;

  const detail::Resolution& resolution() const override { return *trial; }
  void launch() override {
    detail::launch_kernel(entry->kernel, frame.context->device, grid, frame.kernel_params, frame.kernel_param_count,
                          stream, kernel_name);
  }
};

std::vector<detail::MadeTrial> JitFunction::Impl::trials(std::size_t layer, std::span<const std::size_t> configs,
                                                        const detail::Resolution& r) {
  const detail::Autotune tuner(kernel, layer);
  const auto ctx = r.device->context;
  std::vector<detail::MadeTrial> made(configs.size());
  std::vector<std::unique_ptr<Candidate>> candidates(configs.size());
  // First each config's call, in order on this thread (its hooks and heuristics run here),
  // specialized and looked up in the context's table.
  std::vector<std::size_t> missing;
  std::vector<Specialization> specs;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    try {
      auto c = std::make_unique<Candidate>();
      c->args.assign(r.args, r.args + param_count);
      c->options = r.options;
      c->trial = std::make_unique<detail::Resolution>(c->args.data(), c->options, r);
      detail::Resolution& trial = *c->trial;
      tuner.apply(configs[i], trial);
      // A config's hook may set the block shapes of the call's descriptors, which are part of
      // what compiles: it runs once before the kernel is found (a Python one also before each
      // timed launch).
      if (trial.has_descriptors()) tuner.config_hook(configs[i], trial);
      apply_layers(layer + 1, kernel.layers.size(), trial);  // the decorators below see the config's values
      detail::fill_unset(trial);
      const detail::OptionsKey key(c->options);
      const std::span<const Arg> args(c->args.data(), param_count);
      prepare(kernel.signature, args, key, c->frame);
      c->entry = find(ctx, key, c->frame);
      c->grid = r.launch->grid_fn ? r.launch->grid_fn(BoundArgs(kernel.signature, args, &names)) : r.launch->grid;
      c->stream = r.launch->stream;
      c->kernel_name = kernel.signature.name;
      if (c->entry == nullptr) {
        Specialization spec = specialization_of(kernel.signature, c->frame.args, c->frame.codes);
        specs.push_back(std::move(spec));
        missing.push_back(i);  // with everything its compile needs made
      }
      candidates[i] = std::move(c);
    } catch (...) {
      made[i].error = std::current_exception();
    }
  }
  // Then what none of this process's tables holds, compiled at once (or read from the index).
  const auto compiled_errors = detail::run_concurrently(missing.size(), [&](std::size_t j) {
    const Candidate& c = *candidates[missing[j]];
    compile_specialized(r.device->target, c.options, c.frame.args, std::move(specs[j]));
  });
  // Last the modules loaded, in order: miss finds each compiled artifact in memory.
  for (std::size_t j = 0; j < missing.size(); ++j) {
    const std::size_t i = missing[j];
    try {
      if (compiled_errors[j]) std::rethrow_exception(compiled_errors[j]);
      Candidate& c = *candidates[i];
      c.entry = &miss(c.options, ctx, detail::OptionsKey(c.options), c.frame);
    } catch (...) {
      made[i].error = std::current_exception();
      candidates[i].reset();
    }
  }
  for (std::size_t i = 0; i < configs.size(); ++i) made[i].trial = std::move(candidates[i]);
  return made;
}

}  // namespace tritonrt

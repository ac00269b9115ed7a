// A call of a decorated kernel, resolved as Triton's runtime resolves it: the decorators
// applied outermost first, each seeing the values the ones outside it set. Heuristics run
// in Python once per distinct input they read (per device), then are looked up; an
// autotuner benchmarks its configs once per tuning key (per device), in C++ on the call's
// stream, then is looked up. A hit takes no lock, allocates nothing and calls no Python.

#include "function/decorators.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/compile_options.h"
#include "common/errors.h"
#include "common/record_key.h"
#include "common/log.h"
#include "common/trace.h"
#include "function/jit_function_impl.h"
#include "launch/benchmark.h"
#include "launch/device_memory.h"
#include "launch/launcher.h"

namespace tritonrt::detail {

DecoratorState::DecoratorState(const LoadedKernel& kernel) : tunings(kernel.layers.size()) {
  std::size_t heuristics = 0;
  for (const auto& layer : kernel.layers) heuristics += layer.heuristic_names.size();
  memos = std::vector<PublishedList<const MemoEntry>>(heuristics);
}

namespace {

TensorShape shape_of(const Arg& a) {
  TensorShape shape;
  if (a.kind == ArgKind::pointer && a.source == ArgSource::tensor) {
    if (const auto inspect = tensor_inspector()) inspect(a.object, shape);
  }
  return shape;
}

// Whether two values are the same for a memo or a tuning key (strings by content).
bool same_value(const Arg& a, const Arg& b) {
  if (a.value_kind() != b.value_kind()) return false;
  if (a.kind == ArgKind::typed && a.dtype != b.dtype) return false;
  if (a.kind == ArgKind::pointer) return a.value.u == b.value.u && a.dtype == b.dtype && a.source == b.source;
  if (a.kind == ArgKind::dtype && a.source != b.source) return false;
  return same_constexpr(a, b);
}

// Copies `a` into `strings` if it is a string, so that it outlives the call it came from.
Arg kept(const Arg& a, std::deque<std::string>& strings) {
  Arg copy = a;
  if (a.kind == ArgKind::string) {
    strings.emplace_back(a.value.s, a.size);
    copy.value.s = strings.back().data();
  }
  return copy;
}

// Sets a compile option by Triton's name from a decorator's value; false if it is none.
bool set_option(CompileOptions& options, std::string_view name, const Arg& value, const ErrorSite& site) {
  bool found = false;
  for_each_option(options, [&](const char* option, auto& field) {
    if (name != option) return;
    found = true;
    using T = typename std::remove_reference_t<decltype(field)>::value_type;
    const ArgKind kind = value.value_kind();
    if constexpr (std::is_same_v<T, bool>) {
      if (kind != ArgKind::boolean)
        raise<ArgumentError>(site, std::string(option) + " must be a bool, got " + describe(value));
      field = value.value.u != 0;
    } else {
      const bool integer = kind == ArgKind::sint || kind == ArgKind::uint;
      if (!integer || value.value.i < 0 || value.value.i > std::numeric_limits<int>::max()) {
        raise<ArgumentError>(site, std::string(option) + " must be a non-negative int, got " + describe(value));
      }
      field = static_cast<int>(value.value.i);
    }
  });
  return found;
}

// Merges the options a decorator sets into the call's; an option the caller set too is an
// error, as Triton's "multiple values for keyword argument". `by` names the decorator, and is
// only called to build that error.
template <class Describe>
void merge_options(CompileOptions& into, const CompileOptions& from, const ErrorSite& site, Describe&& by) {
#define TRITONRT_MERGE_OPTION(type, name)                                                                              \
  if (from.name) {                                                                                                     \
    if (into.name && *into.name != *from.name) {                                                                       \
      raise<ArgumentError>(site, std::string(#name) + " is set by " + by() + "; the call's LaunchConfig sets it too"); \
    }                                                                                                                  \
    into.name = from.name;                                                                                             \
  }
  TRITONRT_COMPILE_OPTIONS(TRITONRT_MERGE_OPTION)
#undef TRITONRT_MERGE_OPTION
}

}  // namespace

}  // namespace tritonrt::detail

namespace tritonrt {

using detail::Facet;

void JitFunction::Impl::bind_call(std::span<const Arg> given, Resolution& r) const {
  const auto& sig = kernel.signature;
  const auto& call = kernel.call_params;
  if (given.size() > call.size()) {
    detail::raise<ArgumentError>({sig.name}, "takes " + std::to_string(call.size()) +
                                                 " arguments (its decorators set " +
                                                 std::to_string(param_count - call.size()) + " more), " +
                                                 std::to_string(given.size()) + " were given");
  }
  r.count = param_count;
  for (std::size_t i = 0; i < param_count; ++i) {
    r.passed[i] = false;
    Arg unset;
    unset.kind = ArgKind::unset;
    r.args[i] = unset;
  }
  for (std::size_t i = 0; i < given.size(); ++i) r.pass(call[i], given[i]);
  for (std::size_t i = given.size(); i < call.size(); ++i) {
    const std::size_t p = call[i];
    if (!kernel.defaults[p]) {
      detail::raise<ArgumentError>(detail::param_site(sig, p),
                                   "missing argument (the call passes " + std::to_string(call.size()) + ", " +
                                       std::to_string(given.size()) + " given, and this parameter has no default)");
    }
    r.args[p] = *kernel.defaults[p];  // a value for heuristics, but not passed: Triton leaves defaults out of keys
  }
}

void JitFunction::Impl::resolve(std::span<const Arg> given, Resolution& r, JitFunction& fn) {
  bind_call(given, r);
  apply_layers(0, kernel.layers.size(), r, fn);
  fill_unset(r);
}

void JitFunction::Impl::fill_unset(Resolution& r) const {
  // A parameter no decorator set in this call (a config without it): its default, if any.
  for (std::size_t i = 0; i < param_count; ++i) {
    if (r.args[i].kind != ArgKind::unset) continue;
    if (!kernel.defaults[i]) {
      detail::raise<ArgumentError>(detail::param_site(kernel.signature, i),
                                   "is set by a decorator, but none set it for this call and it has no default");
    }
    r.args[i] = *kernel.defaults[i];
  }
}

void JitFunction::Impl::apply_layers(std::size_t first, std::size_t last, Resolution& r, JitFunction& fn) {
  std::size_t memo = 0;
  for (std::size_t l = 0; l < first; ++l) memo += kernel.layers[l].heuristic_names.size();
  for (std::size_t l = first; l < last; ++l) {
    const auto& layer = kernel.layers[l];
    if (layer.kind == Decorator::Kind::heuristics) {
      for (std::size_t h = 0; h < layer.heuristic_names.size(); ++h, ++memo) {
        const Arg value = heuristic(l, h, memo, r);
        const auto& target = layer.heuristic_targets[h];
        if (target.param >= 0) {
          r.pass(static_cast<std::size_t>(target.param), value);
        } else {
          CompileOptions set;
          detail::set_option(set, target.option, value, {kernel.signature.name});
          detail::merge_options(r.options, set, {kernel.signature.name},
                                [&] { return "heuristic '" + layer.heuristic_names[h] + "'"; });
        }
      }
    } else if (layer.kind == Decorator::Kind::autotune) {
      const std::size_t config = tuned_config(l, r, fn);
      apply_config(l, config, r);
      if (layer.configs[config].pre_hook) run_hook(l, "config", r, static_cast<std::ptrdiff_t>(config), false);
    }
  }
}

void JitFunction::Impl::apply_config(std::size_t layer, std::size_t config, Resolution& r) const {
  const auto& c = kernel.layers[layer].configs[config];
  for (const auto& [param, value] : c.params) r.pass(param, value);
  detail::merge_options(r.options, c.options, {kernel.signature.name},
                        [&] { return "the autotune config {" + c.text + "}"; });
}

// --- heuristics -----------------------------------------------------------------------------------

namespace {

// Whether what a memo entry's heuristic read is what it would read now.
bool still_reads(const detail::MemoEntry& entry, const Arg* args, const detail::DeviceContext* device) {
  for (const auto& read : entry.reads) {
    const Arg& a = args[read.param];
    switch (read.facet) {
      case Facet::value:
        if (a.kind == ArgKind::unset || !detail::same_value(a, read.found)) return false;
        break;
      case Facet::present:
        if ((a.kind != ArgKind::unset) != (read.found.value.u != 0)) return false;
        break;
      case Facet::dtype:
        if (a.kind != ArgKind::pointer || a.dtype != read.found.dtype || a.source != read.found.source) return false;
        break;
      case Facet::address:
        if (a.kind != ArgKind::pointer || a.value.u != read.found.value.u) return false;
        break;
      case Facet::device: {
        const int found = a.source == ArgSource::tensor ? detail::shape_of(a).device
                                                        : (device != nullptr ? static_cast<int>(device->device) : -1);
        if (static_cast<std::int64_t>(found) != read.found.value.i) return false;
        break;
      }
      case Facet::shape:
      case Facet::strides: {
        const TensorShape shape = detail::shape_of(a);
        if (shape.dims < 0 || static_cast<std::size_t>(shape.dims) != read.dims.size()) return false;
        const std::int64_t* dims = read.facet == Facet::shape ? shape.sizes : shape.strides;
        if (!std::equal(read.dims.begin(), read.dims.end(), dims)) return false;
        break;
      }
    }
  }
  return true;
}

}  // namespace

namespace {

// --- heuristic values kept across processes -----------------------------------------------------
//
// A memo entry that another process can use goes to tritonrt's index (and from there into
// bundles), keyed by the heuristic and the device it ran for (target and multiprocessor
// count: heuristics often size grids from the device). Its JSON form: {"reads": [[param,
// facet, arg, dims]], "value": arg}, an arg [kind, value bits or text, dtype, stored, source].

// The JSON form of `a`, or nullopt for a value that lives in this process only.
std::optional<nlohmann::json> stored_arg(const Arg& a, bool keep_address) {
  if (a.kind == ArgKind::python_default || a.kind == ArgKind::unset) return std::nullopt;
  if (a.kind == ArgKind::pointer && keep_address) return std::nullopt;  // an address: this process's
  nlohmann::json value = a.kind == ArgKind::string    ? nlohmann::json(std::string(a.value.s, a.size))
                         : a.kind == ArgKind::pointer ? nlohmann::json(0)
                                                      : nlohmann::json(a.value.u);
  return nlohmann::json::array({static_cast<int>(a.kind), std::move(value), static_cast<int>(a.dtype),
                                static_cast<int>(a.stored), static_cast<int>(a.source)});
}

std::optional<std::string> stored_form(const detail::MemoEntry& entry) {
  nlohmann::json reads = nlohmann::json::array();
  for (const auto& read : entry.reads) {
    if (read.facet == Facet::address) return std::nullopt;
    const auto found = stored_arg(read.found, read.facet == Facet::value);
    if (!found) return std::nullopt;
    reads.push_back({read.param, static_cast<int>(read.facet), *found, read.dims});
  }
  const auto value = stored_arg(entry.value, true);
  if (!value) return std::nullopt;
  try {
    return nlohmann::json{{"reads", std::move(reads)}, {"value", *value}}.dump();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // a string that is not UTF-8: kept in this process only, not replaced by another
  }
}

// `j` back as an Arg (strings kept in `strings`); throws on anything malformed or out of
// range (the index's checksums catch damage, not a file written to deceive). A pointer only
// where `pointer_allowed` (what a dtype, shape or strides read found): its address is not kept.
Arg arg_from(const nlohmann::json& j, std::deque<std::string>& strings, bool pointer_allowed) {
  Arg a;
  const int kind = j.at(0).get<int>();
  if (kind < 0 || kind > static_cast<int>(ArgKind::dtype)) throw std::out_of_range("kind");
  a.kind = static_cast<ArgKind>(kind);
  if (a.kind == ArgKind::pointer && !pointer_allowed) throw std::out_of_range("a pointer");
  if (a.kind == ArgKind::string) {
    strings.push_back(j.at(1).get<std::string>());
    a.value.s = strings.back().data();
    a.size = strings.back().size();
  } else if (a.kind != ArgKind::pointer) {
    a.value.u = j.at(1).get<std::uint64_t>();
  }
  const int dtype = j.at(2).get<int>(), stored = j.at(3).get<int>(), source = j.at(4).get<int>();
  if (dtype < 0 || dtype >= kDTypeCount) throw std::out_of_range("dtype");
  a.dtype = static_cast<DType>(dtype);
  const bool number = stored == static_cast<int>(ArgKind::boolean) || stored == static_cast<int>(ArgKind::sint) ||
                      stored == static_cast<int>(ArgKind::uint) || stored == static_cast<int>(ArgKind::real);
  if (a.kind == ArgKind::typed ? !number : stored != static_cast<int>(ArgKind::none)) throw std::out_of_range("stored");
  a.stored = static_cast<ArgKind>(stored);
  if (source != static_cast<int>(ArgSource::address) && source != static_cast<int>(ArgSource::tensor)) {
    throw std::out_of_range("source");
  }
  a.source = static_cast<ArgSource>(source);
  return a;
}

// A stored entry for a kernel of `params` parameters, or nullptr when it does not read back.
std::unique_ptr<detail::MemoEntry> from_stored_form(const std::string& text, std::size_t params) {
  auto entry = std::make_unique<detail::MemoEntry>();
  try {
    const auto j = nlohmann::json::parse(text);
    for (const auto& r : j.at("reads")) {
      const auto param = r.at(0).get<std::size_t>();
      const int facet = r.at(1).get<int>();
      if (param >= params || facet < 0 || facet > static_cast<int>(Facet::device)) return nullptr;
      const bool pointer_allowed = facet == static_cast<int>(Facet::dtype) || facet == static_cast<int>(Facet::shape) ||
                                   facet == static_cast<int>(Facet::strides);
      entry->reads.push_back({param, static_cast<Facet>(facet), arg_from(r.at(2), entry->strings, pointer_allowed),
                              r.at(3).get<std::vector<std::int64_t>>()});
    }
    entry->value = arg_from(j.at("value"), entry->strings, false);
  } catch (const std::exception&) {
    return nullptr;
  }
  return entry;
}

// What heuristic `memo`'s stored values are found by on `device`.
std::string stored_key(std::size_t memo, const detail::DeviceContext& device) {
  return detail::RecordKey::heuristic(memo, device.target.str(), device.multiprocessors).text();
}

}  // namespace

Arg JitFunction::Impl::heuristic(std::size_t layer, std::size_t index, std::size_t memo, Resolution& r) {
  if (const auto& cpp = cpp_heuristics[memo]) {
    return cpp(BoundArgs(kernel.signature, std::span<const Arg>(r.args, param_count)));
  }
  for (const detail::MemoEntry* entry : r.state.memos[memo].entries()) {
    if (still_reads(*entry, r.args, r.context != nullptr ? &r.context->device : nullptr)) return entry->value;
  }
  return heuristic_miss(layer, index, memo, r);
}

std::vector<detail::PythonArg> JitFunction::Impl::python_args(const Arg* args, std::vector<TensorShape>& shapes) const {
  std::vector<detail::PythonArg> out;
  shapes.assign(param_count, TensorShape{});
  for (std::size_t i = 0; i < param_count; ++i) {
    if (args[i].kind == ArgKind::unset) continue;
    shapes[i] = detail::shape_of(args[i]);
    out.push_back({i, &args[i], shapes[i].dims >= 0 ? &shapes[i] : nullptr});
  }
  return out;
}

Arg JitFunction::Impl::heuristic_miss(std::size_t layer, std::size_t index, std::size_t memo, Resolution& r) {
  const std::string& name = kernel.layers[layer].heuristic_names[index];
  // A value another process (or a bundle) recorded for the same inputs and device.
  const std::string key = r.context != nullptr ? stored_key(memo, r.context->device) : "";
  if (!key.empty()) {
    for (const auto& text : detail::stored_heuristic_values(kernel, key)) {
      auto stored = from_stored_form(text, param_count);
      if (stored && still_reads(*stored, r.args, &r.context->device)) {
        std::lock_guard lock(r.state.mutex);
        return r.state.memos[memo].add(std::move(stored)).value;
      }
    }
  }
  std::vector<TensorShape> shapes;
  const auto args = python_args(r.args, shapes);
  detail::Compiler* compiler =
      detail::python_side({kernel.signature.name},
                          fmt::format("heuristic '{}' has no value recorded for these arguments{}", name,
                                      r.context != nullptr ? " on " + r.context->device.target.str() : std::string()))
          .compiler;
  detail::HeuristicResult result;
  {
    detail::GilReleased unlocked;  // the interpreter may be busy on another thread
    result = detail::parse_heuristic_result(kernel, compiler->run_heuristic(kernel, layer, name, args));
  }
  auto entry = std::make_unique<detail::MemoEntry>();
  entry->value = detail::kept(result.value, entry->strings);
  if (result.value.kind == ArgKind::string) {
    entry->strings.back() = result.value_text;
    entry->value.value.s = entry->strings.back().data();
    entry->value.size = entry->strings.back().size();
  }
  for (const auto& [param, facet] : result.reads) {
    const Arg& a = r.args[param];
    detail::MemoEntry::Read read{param, facet, {}, {}};
    switch (facet) {
      case Facet::value:
        read.found = detail::kept(a, entry->strings);
        break;
      case Facet::present:
        read.found.value.u = a.kind != ArgKind::unset;
        break;
      case Facet::dtype:
      case Facet::address:
        read.found = a;
        break;
      case Facet::device:
        read.found.value.i = a.source == ArgSource::tensor
                                 ? shapes[param].device
                                 : (r.context != nullptr ? static_cast<int>(r.context->device.device) : -1);
        break;
      case Facet::shape:
        read.dims.assign(shapes[param].sizes, shapes[param].sizes + std::max(0, shapes[param].dims));
        break;
      case Facet::strides:
        read.dims.assign(shapes[param].strides, shapes[param].strides + std::max(0, shapes[param].dims));
        break;
    }
    entry->reads.push_back(std::move(read));
  }
  if (!result.memoizable) {
    // It read every argument: nothing to key a memo on. The value serves this call only.
    detail::log_about(LogLevel::debug, {kernel.signature.name},
                      "heuristic '{}' reads every argument: it runs in Python on every call", name);
    return detail::kept(entry->value, r.strings);
  }
  if (!key.empty()) {
    if (const auto text = stored_form(*entry)) detail::store_heuristic_value(kernel, key, *text);
  }
  std::lock_guard lock(r.state.mutex);
  return r.state.memos[memo].add(std::move(entry)).value;
}

// --- autotune -------------------------------------------------------------------------------------

std::size_t JitFunction::Impl::tuned_config(std::size_t layer, Resolution& r, JitFunction& fn) {
  const auto& configs = kernel.layers[layer].configs;
  if (configs.size() == 1) return 0;  // as Triton: one config is used without tuning
  // Triton's key: the values of the key parameters the call gives, then the dtype of every
  // pointer argument it gives, in the order given. Stack storage, written only as used.
  alignas(Arg) std::byte storage[sizeof(Arg) * detail::kMaxParams * 2];
  Arg* key_args = reinterpret_cast<Arg*>(storage);
  std::size_t count = 0;
  for (const std::size_t k : kernel.layers[layer].keys) {
    if (r.passed[k]) key_args[count++] = r.args[k];
  }
  for (std::size_t i = 0; i < r.passed_count; ++i) {
    const Arg& a = r.args[r.order[i]];
    if (a.kind != ArgKind::pointer) continue;
    Arg dtype;  // the dtype, with where it came from: Triton keys on str(arg.dtype)
    dtype.kind = ArgKind::dtype;
    dtype.dtype = a.dtype;
    dtype.source = a.source;
    key_args[count++] = dtype;
  }
  const std::span<const Arg> key(key_args, count);
  std::uint64_t hash = detail::kHashSeed;
  for (const Arg& a : key) hash = detail::hash_constexpr(hash, a);
  for (const detail::TuningEntry* entry : r.state.tunings[layer].entries()) {
    if (entry->hash != hash || entry->key.size() != key.size()) continue;
    if (std::equal(key.begin(), key.end(), entry->key.begin(), detail::same_value)) return entry->config;
  }
  return tune(layer, std::vector<Arg>(key.begin(), key.end()), hash, r, fn);
}

namespace {

// The bytes a pointer argument spans, for reset_to_zero and restore_value; 0 when unknown.
std::size_t extent_of(const Arg& a) {
  if (a.kind != ArgKind::pointer) return 0;
  return a.source == ArgSource::tensor ? detail::shape_of(a).bytes : a.size;
}

// CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many registers for the block): Triton's OutOfResources.
constexpr int kLaunchOutOfResources = 701;

// Lexicographic over (median, 20th, 80th percentile), as Triton's min over its timing lists.
bool faster(const std::array<double, 3>& a, const std::array<double, 3>& b) { return a < b; }

// The tuning key as Python prints Triton's tuple, for messages.
std::string key_text(const std::vector<Arg>& key) {
  std::string text = "(";
  for (std::size_t i = 0; i < key.size(); ++i) {
    if (i) text += ", ";
    const Arg& a = key[i];
    if (a.kind == ArgKind::dtype) {
      text += "'" + std::string(detail::dtype_text(a.dtype, a.source)) + "'";
    } else if (a.kind == ArgKind::string) {
      text += "'" + std::string(a.value.s, a.size) + "'";
    } else {
      text += detail::python_repr(a, {});
    }
  }
  return text + (key.size() == 1 ? ",)" : ")");
}

}  // namespace

std::vector<std::size_t> JitFunction::Impl::candidates(std::size_t layer, const Resolution& r) const {
  const auto& tuner = kernel.layers[layer];
  std::vector<std::size_t> kept(tuner.configs.size());
  for (std::size_t i = 0; i < kept.size(); ++i) kept[i] = i;
  if (!tuner.prune) return kept;
  std::vector<TensorShape> shapes;
  const auto args = python_args(r.args, shapes);
  std::vector<std::size_t> given;  // what Triton's run receives positionally
  for (const std::size_t p : kernel.call_params) {
    if (r.passed[p]) given.push_back(p);
  }
  detail::GilReleased unlocked;
  kept = detail::python_side({kernel.signature.name}, "its autotuner prunes configs")
             .compiler->prune_configs(kernel, layer, args, given);
  if (kept.empty()) detail::raise<ArgumentError>({kernel.signature.name}, "pruning left no autotune config to try");
  return kept;
}

JitFunction::Impl::Candidate JitFunction::Impl::prepare_candidate(std::size_t layer, std::size_t config,
                                                                  const Resolution& r, JitFunction& fn) {
  Candidate c;
  c.args.assign(r.args, r.args + param_count);
  c.options = r.options;
  c.trial = std::make_unique<Resolution>(c.args.data(), c.options, r);
  Resolution& trial = *c.trial;
  apply_config(layer, config, trial);
  apply_layers(layer + 1, kernel.layers.size(), trial, fn);  // the decorators below see the config's values
  fill_unset(trial);
  c.frame = std::make_unique<detail::CallFrame>();
  const detail::OptionsKey key(c.options);
  const std::span<const Arg> args(c.args.data(), param_count);
  prepare(kernel.signature, args, key, *c.frame);
  const auto ctx = r.context->device.context;
  c.entry = find(ctx, key, *c.frame);
  if (c.entry == nullptr) c.entry = &load(fn, c.options, ctx, key, *c.frame);
  c.grid = r.launch->grid_fn ? r.launch->grid_fn(BoundArgs(kernel.signature, args)) : r.launch->grid;
  c.stream = r.launch->stream;
  return c;
}

void JitFunction::Impl::Candidate::launch(std::string_view kernel_name) {
  detail::launch_kernel(entry->kernel, frame->context->device, grid, frame->kernel_params, frame->kernel_param_count,
                        stream, kernel_name);
}

void JitFunction::Impl::run_hook(std::size_t layer, const char* which, const Resolution& r, std::ptrdiff_t config,
                                 bool reset_only) const {
  std::vector<TensorShape> shapes;
  const auto args = python_args(r.args, shapes);
  detail::GilReleased unlocked;
  detail::python_side({kernel.signature.name}, "its autotuner has hooks")
      .compiler->run_hook(kernel, layer, which, args, r.launch != nullptr ? r.launch->stream : nullptr, config,
                          reset_only);
}

std::size_t JitFunction::Impl::tune(std::size_t layer, std::vector<Arg> key, std::uint64_t hash, Resolution& r,
                                    JitFunction& fn) {
  const detail::ErrorSite site{kernel.signature.name};
  if (r.context == nullptr || r.launch == nullptr) {
    detail::raise<ArgumentError>(site,
                                 "is autotuned: which config it compiles to is decided by tuning on a GPU; "
                                 "compile_configs() compiles each config for a target");
  }
  // One tuning per key, however many threads ask at once; the others wait for its choice.
  std::string flight = std::to_string(layer) + "|";
  for (const Arg& a : key) {
    flight += std::to_string(static_cast<int>(a.kind)) + ":" +
              (a.kind == ArgKind::string ? std::string(a.value.s, a.size) : std::to_string(a.value.u)) + "|";
  }
  std::promise<std::size_t> promise;
  std::shared_future<std::size_t> future;
  {
    detail::GilReleased unlocked;
    std::lock_guard lock(r.state.mutex);
    for (const detail::TuningEntry* entry : r.state.tunings[layer].entries()) {
      if (entry->hash == hash &&
          std::equal(key.begin(), key.end(), entry->key.begin(), entry->key.end(), detail::same_value)) {
        return entry->config;
      }
    }
    if (const auto it = r.state.tuning_in_flight.find(flight); it != r.state.tuning_in_flight.end()) {
      future = it->second;
    } else {
      r.state.tuning_in_flight.emplace(flight, promise.get_future().share());
    }
  }
  if (future.valid()) {
    detail::GilReleased unlocked;
    return future.get();
  }
  try {
    // Events and buffers belong to the launch's context, whichever this thread has current.
    const detail::ScopedContext in(r.context->device.context);
    const std::size_t chosen = run_tuning(layer, key, r, fn);
    detail::GilReleased unlocked;
    std::lock_guard lock(r.state.mutex);
    auto entry = std::make_unique<detail::TuningEntry>();
    entry->hash = hash;
    for (const Arg& a : key) entry->key.push_back(detail::kept(a, entry->strings));
    entry->config = chosen;
    r.state.tunings[layer].add(std::move(entry));
    r.state.tuning_in_flight.erase(flight);
    promise.set_value(chosen);
    return chosen;
  } catch (...) {
    {
      detail::GilReleased unlocked;
      std::lock_guard lock(r.state.mutex);
      r.state.tuning_in_flight.erase(flight);  // a failed tuning is tried again by the next call
    }
    promise.set_exception(std::current_exception());
    throw;
  }
}

std::size_t JitFunction::Impl::run_tuning(std::size_t layer, const std::vector<Arg>& key, Resolution& r,
                                          JitFunction& fn) {
  const auto& tuner = kernel.layers[layer];
  const detail::ErrorSite site{kernel.signature.name};
  void* const stream = r.launch->stream;
  if (detail::is_capturing(stream)) {
    detail::raise<ArgumentError>(site, "needs tuning for key " + key_text(key) +
                                           ", which cannot run inside a CUDA "
                                           "graph capture: launch it once before capturing");
  }
  // TRITON_PRINT_AUTOTUNING asks for tuning's lines whatever the log level.
  const bool verbose = tuner.print || detail::log_enabled(LogLevel::info);
  auto say = [&]<class... Args>(fmt::format_string<Args...> format, Args&&... args) {
    if (verbose)
      detail::write_log(LogLevel::info, detail::message_about(site, fmt::format(format, std::forward<Args>(args)...)));
  };
  const auto started = std::chrono::steady_clock::now();
  const Target& target = r.context->device.target;

  // A choice made before, by this or another process (or bundled), for the same sources,
  // target and key:
  // taken as Triton takes its in-memory one (no pruning, no timing, no Python).
  const std::string choice_key = detail::RecordKey::choice(layer, target.str(), key_text(key)).text();
  if (const auto stored = detail::indexed_choice(kernel, layer, choice_key)) {
    say("tuning result for key {} read from {}: {}", key_text(key), stored->where, tuner.configs[stored->config].text);
    return stored->config;
  }

  detail::Traced traced(site, "tuning for key {}", key_text(key));
  const std::vector<std::size_t> candidates = this->candidates(layer, r);
  // Pruning left one config: Triton from 3.8 takes it without timing it (nor recording it).
  if (candidates.size() == 1 && !tuner.tune_lone_pruned) return candidates[0];
  const bool hooks_in_configs =
      std::any_of(candidates.begin(), candidates.end(), [&](std::size_t c) { return tuner.configs[c].pre_hook; });
  const bool persist = tuner.cache_results && !key.empty() && !hooks_in_configs;

  std::vector<std::array<double, 3>> timings(
      candidates.size(), {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(),
                          std::numeric_limits<double>::infinity()});
  std::vector<std::string> failures;
  bool from_file = false;
  if (persist) {
    detail::GilReleased unlocked;
    if (const auto stored = detail::python_side({kernel.signature.name}, "its tuning results are shared with Triton")
                                .compiler->read_tuning(kernel, layer, target, key, candidates)) {
      for (std::size_t i = 0; i < candidates.size(); ++i) {
        if ((*stored)[i] && (*stored)[i]->size() == 3) {
          timings[i] = {(*stored)[i]->at(0), (*stored)[i]->at(1), (*stored)[i]->at(2)};
        }
      }
      from_file = true;
      say("tuning result for key {} read from Triton's cache", key_text(key));
    }
  }
  if (!from_file) {
    // reset_to_zero and restore_value, done here unless the tuner's own hooks replace them.
    std::vector<std::pair<std::uint64_t, std::size_t>> zeroed, restored;
    auto extent = [&](std::size_t p, const char* list) {
      const std::size_t bytes = extent_of(r.args[p]);
      if (bytes == 0) {
        detail::raise<ArgumentError>(detail::param_site(kernel.signature, p),
                                     std::string("is in the autotuner's ") + list +
                                         ": tritonrt must know how many bytes it spans (pass a tensor through "
                                         "tritonrt/torch.h, or tritonrt::DevicePtr{address, dtype, bytes})");
      }
      return std::make_pair(r.args[p].value.u, bytes);
    };
    if (!tuner.user_pre_hook) {
      for (const std::size_t p : tuner.reset_to_zero) zeroed.push_back(extent(p, "reset_to_zero"));
      for (const std::size_t p : tuner.restore_value) restored.push_back(extent(p, "restore_value"));
    }
    std::vector<std::unique_ptr<detail::StreamBuffer>> copies;
    for (const auto& [address, bytes] : restored)
      copies.push_back(std::make_unique<detail::StreamBuffer>(bytes, stream));

    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const std::size_t c = candidates[i];
      const auto& config = tuner.configs[c];
      say("autotuning with config {}", config.text);
      try {
        Candidate candidate = prepare_candidate(layer, c, r, fn);
        auto trial = [&] {
          if (config.pre_hook) run_hook(layer, "config", candidate.resolution(), static_cast<std::ptrdiff_t>(c), false);
          if (tuner.user_pre_hook) {
            run_hook(layer, "pre_hook", candidate.resolution(), -1, false);
          } else {
            for (const auto& [address, bytes] : zeroed) detail::zero_async(address, bytes, stream);
            for (std::size_t k = 0; k < restored.size(); ++k) {
              detail::copy_async(copies[k]->address(), restored[k].first, restored[k].second, stream);
            }
          }
          candidate.launch(kernel.signature.name);
          if (tuner.user_post_hook) {
            run_hook(layer, "post_hook", candidate.resolution(), -1, false);
          } else if (!tuner.user_pre_hook) {
            for (std::size_t k = 0; k < restored.size(); ++k) {
              detail::copy_async(restored[k].first, copies[k]->address(), restored[k].second, stream);
            }
          }
        };
        timings[i] = detail::benchmark(trial, stream);
        say("config {}: {:f} ms", config.text, timings[i][0]);
      } catch (const Error& e) {
        // As Triton: a config that does not compile or does not fit the device is skipped.
        const auto* driver = dynamic_cast<const DriverError*>(&e);
        const bool skip = dynamic_cast<const CompileError*>(&e) != nullptr ||
                          dynamic_cast<const ResourceError*>(&e) != nullptr ||
                          (driver != nullptr && driver->code() == kLaunchOutOfResources);
        if (!skip) throw;
        failures.push_back("{" + config.text + "}: " + e.what());
        say("skipped config {}", failures.back());
      }
    }
  }
  const auto best = std::min_element(timings.begin(), timings.end(), faster);
  if (!std::isfinite((*best)[0])) {
    std::string why;
    for (const auto& f : failures) why += "\n  " + f;
    detail::raise<CompileError>(site, "none of its " + std::to_string(candidates.size()) +
                                          " autotune configs ran for key " + key_text(key) + ":" + why);
  }
  const std::size_t chosen = candidates[static_cast<std::size_t>(best - timings.begin())];
  if (!from_file) {
    // As Triton: the reset_to_zero arguments are zeroed once more before the real launch.
    if (tuner.user_pre_hook) {
      run_hook(layer, "pre_hook", r, -1, true);
    } else {
      for (const std::size_t p : tuner.reset_to_zero)
        detail::zero_async(r.args[p].value.u, extent_of(r.args[p]), stream);
    }
    if (persist) {
      std::vector<std::vector<double>> stored;
      for (const auto& t : timings) stored.push_back({t[0], t[1], t[2]});
      detail::GilReleased unlocked;
      detail::python_side({kernel.signature.name}, "its tuning results are shared with Triton")
          .compiler->write_tuning(kernel, layer, target, key, candidates, stored);
    }
  }
  detail::index_choice(kernel, layer, choice_key, chosen);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  say("autotuning for key {} finished after {:f} s; best config selected: {}", key_text(key), seconds,
      tuner.configs[chosen].text);
  return chosen;
}

}  // namespace tritonrt

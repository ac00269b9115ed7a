// The bridge's answers (JSON written by the bridge, python_compiler/bridge/) read into C++ form. Every field is read
// through JsonReader, so a malformed answer is a PythonError naming the field, never a crash;
// tests/fuzz feeds these parsers arbitrary text.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>

#include "common/compile_options.h"
#include "common/json.h"
#include "compiler/compiler.h"

namespace tritonrt::detail {
namespace {

using Reader = JsonReader<PythonError>;

// A Python float as float.hex() spells it ("0x1.8p+1", "-inf", "nan"): exact, and able to
// carry the non-finite values Triton allows as constexprs.
double parse_float_hex(const Reader& read, const std::string& text) {
  if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (text == "inf") return std::numeric_limits<double>::infinity();
  if (text == "-inf") return -std::numeric_limits<double>::infinity();
  const bool negative = text.starts_with("-");
  const std::string_view digits = std::string_view(text).substr(negative ? 1 : 0);
  double value = 0;
  if (digits.starts_with("0x")) {
    const auto body = digits.substr(2);
    if (body.starts_with('-')) read.fail("float '" + text + "' is not in float.hex() form");
    const auto [end, error] = std::from_chars(body.data(), body.data() + body.size(), value, std::chars_format::hex);
    if (error == std::errc() && end == body.data() + body.size()) return negative ? -value : value;
  }
  read.fail("float '" + text + "' is not in float.hex() form");
}

// A Python value as the bridge's encode (bridge/describe.py) writes it, or nullopt for "absent" (no default);
// `storage` keeps a string's text. Objects tritonrt cannot pass stay Python's
// (ArgKind::python_default: only a default can be one).
std::optional<Arg> encoded_value(const Reader& read, const nlohmann::json& d, std::deque<std::string>& storage) {
  const auto kind = read.field<std::string>(d, "kind");
  Arg a;
  if (kind == "absent") return std::nullopt;
  if (kind == "none") {
    a.kind = ArgKind::none;
  } else if (kind == "bool") {
    a.kind = ArgKind::boolean;
    a.value.u = read.field<bool>(d, "value") ? 1 : 0;
  } else if (kind == "int") {
    const auto value = read.field<nlohmann::json>(d, "value");
    if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
      a.kind = ArgKind::uint;
      a.value.u = read.as<std::uint64_t>(value, "default.value");
    } else {
      a.kind = ArgKind::sint;
      a.value.i = read.as<std::int64_t>(value, "default.value");
    }
  } else if (kind == "float") {
    a.kind = ArgKind::real;
    a.value.f = parse_float_hex(read, read.field<std::string>(d, "value"));
  } else if (kind == "str") {
    storage.push_back(read.field<std::string>(d, "value"));
    a.kind = ArgKind::string;
    a.value.s = storage.back().data();
    a.size = storage.back().size();
  } else if (kind == "dtype") {
    const auto t = parse_dtype(read.field<std::string>(d, "value"));
    a.kind = t ? ArgKind::dtype : ArgKind::python_default;  // a type tritonrt has no name for stays Python's
    if (t) a.dtype = *t;
  } else if (kind == "object") {
    a.kind = ArgKind::python_default;
  } else {
    read.fail("default kind '" + kind + "' is unknown");
  }
  return a;
}

// The parameter called `name`, or -1 when the kernel has none.
std::ptrdiff_t param_index(const KernelSignature& sig, const std::string& name) {
  for (std::size_t i = 0; i < sig.params.size(); ++i) {
    if (sig.params[i].name == name) return static_cast<std::ptrdiff_t>(i);
  }
  return -1;
}

// What a decorator's name sets: a parameter (marked as set by a decorator), or a compile
// option Triton takes as a keyword argument (num_warps, ...); anything else is an error.
Assignee assignee(KernelDescription& k, const std::string& name, const std::string& by) {
  Assignee a;
  a.param = param_index(k.signature, name);
  if (a.param >= 0) {
    k.signature.params[static_cast<std::size_t>(a.param)].set_by_decorator = true;
    return a;
  }
  bool option = false;
  CompileOptions probe;
  for_each_option(probe, [&](const char* option_name, const auto&) { option = option || name == option_name; });
  if (!option) {
    raise<SourceError>({k.signature.name},
                       "{} sets '{}', which is neither a parameter nor a compile option of the kernel", by, name);
  }
  a.option = name;
  return a;
}

// The parameter indices of a list of names that must all be parameters.
std::vector<std::size_t> param_indices(const Reader& read, const KernelDescription& k, const nlohmann::json& names,
                                       const char* what) {
  std::vector<std::size_t> out;
  if (!names.is_array()) read.fail(std::string("field '") + what + "' is not a list");
  for (const auto& n : names) {
    const auto name = read.as<std::string>(n, what);
    const auto index = param_index(k.signature, name);
    if (index < 0) {
      raise<SourceError>({k.signature.name}, "@triton.autotune's {} names '{}', which is not a parameter of the kernel",
                         what, name);
    }
    out.push_back(static_cast<std::size_t>(index));
  }
  return out;
}

TuningConfig parse_config(const Reader& read, const nlohmann::json& c, KernelDescription& k) {
  TuningConfig config;
  config.text = read.field<std::string>(c, "text");
  const auto kwargs = read.field<nlohmann::json>(c, "kwargs");
  if (!kwargs.is_object()) read.fail("field 'kwargs' of a config is not an object");
  for (const auto& [name, encoded] : kwargs.items()) {
    const Assignee target = assignee(k, name, "autotune config {" + config.text + "}");
    const auto value = encoded_value(read, encoded, k.strings);
    if (!value || value->kind == ArgKind::python_default) {
      raise<SourceError>({k.signature.name},
                         "autotune config {{{}}} sets '{}' to a value tritonrt cannot pass (bool, int, float, str, "
                         "None or a triton.language dtype)",
                         config.text, name);
    }
    if (target.param < 0) {
      raise<SourceError>(
          {k.signature.name},
          "autotune config {{{}}} sets the option '{}' among its kwargs; Config takes it as its own argument",
          config.text, name);
    }
    config.params.emplace_back(static_cast<std::size_t>(target.param), *value);
  }
  auto option = [&](const char* name) -> std::optional<int> {
    const auto v = read.field<nlohmann::json>(c, name);
    if (v.is_null()) return std::nullopt;
    return read.as<int>(v, name);
  };
  config.options.num_warps = option("num_warps");
  config.options.num_stages = option("num_stages");
  config.options.num_ctas = option("num_ctas");
  config.options.maxnreg = option("maxnreg");
  config.pre_hook = read.field<bool>(c, "pre_hook");
  return config;
}

DecoratorLayer parse_layer(const Reader& read, const nlohmann::json& d, KernelDescription& k) {
  DecoratorLayer layer;
  Decorator described;
  described.type = read.field<std::string>(d, "type");
  const auto kind = read.field<std::string>(d, "kind");
  if (kind == "heuristics") {
    layer.kind = described.kind = Decorator::Kind::heuristics;
    const auto names = read.field<nlohmann::json>(d, "names");
    if (!names.is_array()) read.fail("field 'names' is not a list");
    for (const auto& n : names) {
      const auto name = read.as<std::string>(n, "names");
      layer.heuristic_names.push_back(name);
      layer.heuristic_targets.push_back(assignee(k, name, "@triton.heuristics"));
      described.names.push_back(name);
    }
  } else if (kind == "autotune") {
    layer.kind = described.kind = Decorator::Kind::autotune;
    const auto keys = read.field<nlohmann::json>(d, "keys");
    if (!keys.is_array()) read.fail("field 'keys' is not a list");
    for (const auto& n : keys) {
      // Triton 3.6 leaves out of the tuning key the names that are no parameter; so do we.
      const auto name = read.as<std::string>(n, "keys");
      described.names.push_back(name);
      if (const auto index = param_index(k.signature, name); index >= 0)
        layer.keys.push_back(static_cast<std::size_t>(index));
    }
    const auto configs = read.field<nlohmann::json>(d, "configs");
    if (!configs.is_array() || configs.empty()) read.fail("field 'configs' is not a non-empty list");
    for (const auto& c : configs) layer.configs.push_back(parse_config(read, c, k));
    described.configs = layer.configs.size();
    layer.reset_to_zero = param_indices(read, k, read.field<nlohmann::json>(d, "reset_to_zero"), "reset_to_zero");
    layer.restore_value = param_indices(read, k, read.field<nlohmann::json>(d, "restore_value"), "restore_value");
    layer.user_pre_hook = read.field<bool>(d, "pre_hook");
    layer.user_post_hook = read.field<bool>(d, "post_hook");
    layer.prune = read.field<bool>(d, "prune");
    layer.cache_results = read.field<bool>(d, "cache_results");
    layer.print = read.field<bool>(d, "print");
    layer.tune_lone_pruned = read.field<bool>(d, "tune_lone_pruned");
  } else if (kind == "wrapper") {
    layer.kind = described.kind = Decorator::Kind::wrapper;
  } else {
    read.fail("decorator kind '" + kind + "' is unknown");
  }
  k.signature.decorators.push_back(std::move(described));
  return layer;
}

}  // namespace

KernelDescription parse_kernel_description(std::string_view json) {
  const Reader read({}, "the bridge's kernel description");
  const nlohmann::json info = read.parse(json);
  KernelDescription k;
  k.handle = read.field<int>(info, "handle");
  auto& sig = k.signature;
  sig.name = read.field<std::string>(info, "name");
  sig.full_name = read.field<std::string>(info, "full_name");
  sig.file = read.field_or<std::string>(info, "file", "");
  if (const auto searched = read.field_or<nlohmann::json>(info, "search_path", nullptr); !searched.is_null()) {
    if (!searched.is_array()) read.fail("field 'search_path' is not a list");
    k.search_path.emplace();
    for (const auto& folder : searched) k.search_path->push_back(read.as<std::string>(folder, "search_path"));
  }
  const auto params = read.field<nlohmann::json>(info, "params");
  if (!params.is_array()) read.fail("field 'params' is not a list");
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& p = params[i];
    ParamInfo pi;
    pi.name = read.field<std::string>(p, "name");
    pi.is_constexpr = read.field<bool>(p, "is_constexpr");
    pi.is_const = read.field<bool>(p, "is_const");
    pi.do_not_specialize = read.field<bool>(p, "do_not_specialize");
    pi.do_not_specialize_on_alignment = read.field<bool>(p, "do_not_specialize_on_alignment");
    pi.annotation_type = read.field<std::string>(p, "annotation_type");
    const auto described = read.field<nlohmann::json>(p, "default");
    k.defaults.push_back(encoded_value(read, described, k.strings));
    pi.has_default = k.defaults.back().has_value();
    if (pi.has_default) pi.default_repr = read.field<std::string>(described, "repr");
    std::optional<std::uint8_t> annotated;
    if (!pi.annotation_type.empty() && !pi.is_constexpr) {
      annotated = parse_type_code(pi.annotation_type);
      if (!annotated) {
        raise<SourceError>({sig.name, pi.name, static_cast<std::ptrdiff_t>(i)},
                           "annotation '{}' names a type tritonrt does not know", pi.annotation_type);
      }
    }
    const ParamRule rule = ParamRule::make(pi.is_constexpr, pi.is_const, !pi.do_not_specialize,
                                           !pi.do_not_specialize_on_alignment, annotated);
    sig.params.push_back(std::move(pi));
    k.param_rules.push_back(rule);
  }
  const auto decorators = read.field<nlohmann::json>(info, "decorators");
  if (!decorators.is_array()) read.fail("field 'decorators' is not a list");
  for (const auto& d : decorators) k.layers.push_back(parse_layer(read, d, k));
  for (std::size_t i = 0; i < sig.params.size(); ++i) {
    if (!sig.params[i].set_by_decorator) k.call_params.push_back(i);
  }
  return k;
}

namespace {

// The bridge's [[name, facet]] reads into `reads`; false when one names no parameter of the
// kernel (e.g. 'grid'), which nothing can be keyed on, unless `names_fixed`: a config hook's
// names are the parameters and the config's own (the same on every call of the config).
bool parse_reads(const Reader& read, const nlohmann::json& pairs, const KernelDescription& kernel,
                 std::vector<std::pair<std::size_t, Facet>>& reads, bool names_fixed = false) {
  if (!pairs.is_array()) read.fail("field 'reads' is not a list");
  static constexpr std::pair<const char*, Facet> kFacets[] = {
      {"value", Facet::value},     {"present", Facet::present}, {"dtype", Facet::dtype},
      {"address", Facet::address}, {"shape", Facet::shape},     {"strides", Facet::strides},
      {"device", Facet::device},   {"kind", Facet::kind}};
  bool keyed = true;
  for (const auto& pair : pairs) {
    if (!pair.is_array() || pair.size() != 2) read.fail("field 'reads' holds no [name, facet] pair");
    const auto name = read.as<std::string>(pair[0], "reads");
    const auto facet_name = read.as<std::string>(pair[1], "reads");
    const auto index = param_index(kernel.signature, name);
    if (index < 0) {
      keyed = keyed && names_fixed;
      continue;
    }
    const auto facet =
        std::find_if(std::begin(kFacets), std::end(kFacets), [&](const auto& f) { return facet_name == f.first; });
    if (facet == std::end(kFacets)) read.fail("facet '" + facet_name + "' is unknown");
    reads.emplace_back(static_cast<std::size_t>(index), facet->second);
  }
  return keyed;
}

}  // namespace

HeuristicResult parse_heuristic_result(const KernelDescription& kernel, std::string_view json) {
  const Reader read({}, "the bridge's heuristic result");
  const nlohmann::json answer = read.parse(json);
  HeuristicResult result;
  std::deque<std::string> storage;
  const auto value = encoded_value(read, read.field<nlohmann::json>(answer, "value"), storage);
  if (!value || value->kind == ArgKind::python_default) {
    const auto described = read.field<nlohmann::json>(answer, "value");
    raise<ArgumentError>({kernel.signature.name},
                         "a heuristic returned a {}, which tritonrt cannot pass (bool, int, float, str, None or a "
                         "triton.language dtype)",
                         read.field_or<std::string>(described, "type", "value"));
  }
  result.value = *value;
  if (!storage.empty()) result.value_text = storage.back();  // the caller points value.s at its copy
  const auto reads = read.field<nlohmann::json>(answer, "reads");
  result.memoizable = !reads.is_null() && parse_reads(read, reads, kernel, result.reads);
  return result;
}

HookResult parse_hook_result(const KernelDescription& kernel, std::string_view json) {
  const Reader read({kernel.signature.name}, "the bridge's hook result");
  const nlohmann::json answer = read.parse(json);
  HookResult result;
  const auto changes = read.field<nlohmann::json>(answer, "changes");
  if (!changes.is_array()) read.fail("field 'changes' is not a list");
  for (const auto& change : changes) {
    if (!change.is_array() || change.size() != 2 || !change[1].is_array()) {
      read.fail("field 'changes' holds no [param, block shape] pair");
    }
    const auto param = read.as<std::size_t>(change[0], "changes");
    if (param >= kernel.signature.params.size()) read.fail("field 'changes' names a parameter the kernel lacks");
    std::vector<std::int64_t> block;
    for (const auto& size : change[1]) block.push_back(read.as<std::int64_t>(size, "changes"));
    result.changes.emplace_back(param, std::move(block));
  }
  const auto reads = read.field<nlohmann::json>(answer, "reads");
  result.why = read.field_or<std::string>(answer, "why", "");
  result.memoizable = !reads.is_null() && parse_reads(read, reads, kernel, result.reads, true);
  if (!result.memoizable && result.why.empty()) result.why = "did what tritonrt cannot repeat";
  return result;
}

SpecializationRules parse_specialization_rules(std::string_view json) {
  const Reader read({}, "the installed Triton's table of specialization rules");
  const nlohmann::json answer = read.parse(json);
  SpecializationRules rules;
  rules.triton_version = read.field<std::string>(answer, "triton_version");
  auto dtype = [&](const char* key) {
    const auto name = read.field<std::string>(answer, key);
    const auto t = parse_dtype(name);
    if (!t) read.fail("name an unknown type '" + name + "' for " + key);
    return *t;
  };
  rules.bool_type = dtype("bool_type");
  rules.float_type = dtype("float_type");
  rules.int_one_is_constexpr = read.field<bool>(answer, "int_one_is_constexpr");
  auto power_of_two = [&](const char* key) {
    const auto v = read.field<std::int64_t>(answer, key);
    if (v < 1 || (v & (v - 1)) != 0)
      read.fail("give '" + std::string(key) + "' = " + std::to_string(v) + ", not a power of two");
    return v;
  };
  rules.int_divisibility = power_of_two("int_divisibility");
  rules.pointer_divisibility = power_of_two("pointer_divisibility");
  const auto pointers = read.field<nlohmann::json>(answer, "pointer_types");
  if (!pointers.is_array() || pointers.size() != kDTypeCount) read.fail("list no pointer type per dtype");
  for (int i = 0; i < kDTypeCount; ++i) {
    const auto& pair = pointers[i];
    if (!pair.is_array() || pair.size() != 2) read.fail("give no [plain, const] pointer type pair");
    rules.pointer_types[i] = {read.as<std::string>(pair[0], "pointer_types"),
                              read.as<std::string>(pair[1], "pointer_types")};
  }
  // Rules recorded before it was asked are Triton 3.6's, which passes one flag.
  rules.descriptor_flags = static_cast<int>(read.field_or<std::int64_t>(answer, "descriptor_flags", 1));
  if (rules.descriptor_flags < 1 || rules.descriptor_flags > 2) read.fail("give descriptor_flags outside 1 to 2");
  // Rules recorded before it was asked: no descriptor inside a tuple was launched then.
  rules.descriptors_in_tuples = read.field_or<bool>(answer, "descriptors_in_tuples", false);
  // Gluon's layout, where the bridge could read how its Triton prints one (older records: none).
  const auto layout = read.field_or<nlohmann::json>(answer, "nvmma_layout", nlohmann::json());
  if (layout.is_object()) {
    rules.nvmma_layout_class = read.field<std::string>(layout, "name");
    for (const auto& field : read.field<nlohmann::json>(layout, "fields")) {
      if (!field.is_array() || field.size() != 2) read.fail("give a layout field that is not [name, default]");
      const auto name = read.as<std::string>(field[0], "nvmma_layout");
      static const std::set<std::string> filled = {"swizzle_byte_width", "element_bitwidth", "rank", "transposed",
                                                   "fp4_padded"};
      if (field[1].is_null() != (filled.count(name) == 1)) read.fail("give a layout field tritonrt cannot fill");
      rules.nvmma_layout_fields.emplace_back(
          name, field[1].is_null() ? std::nullopt : std::optional(read.as<std::string>(field[1], "nvmma_layout")));
    }
  } else if (!layout.is_null()) {
    read.fail("give an nvmma_layout that is not an object");
  }
  return rules;
}

}  // namespace tritonrt::detail

// The bridge's answers (JSON written by bridge.py) read into C++ form. Every field is read
// through JsonReader, so a malformed answer is a PythonError naming the field, never a crash;
// tests/fuzz feeds these parsers arbitrary text.

#include <charconv>
#include <cmath>
#include <limits>

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
    const auto [end, error] = std::from_chars(body.data(), body.data() + body.size(), value, std::chars_format::hex);
    if (error == std::errc() && end == body.data() + body.size()) return negative ? -value : value;
  }
  read.fail("float '" + text + "' is not in float.hex() form");
}

// A parameter's default, or nullopt when it has none; `storage` keeps a string's text.
std::optional<Arg> default_arg(const Reader& read, const nlohmann::json& d, std::string& storage) {
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
    storage = read.field<std::string>(d, "value");
    a.kind = ArgKind::string;
  } else if (kind == "object") {
    a.kind = ArgKind::python_default;
  } else {
    read.fail("default kind '" + kind + "' is unknown");
  }
  return a;
}

}  // namespace

LoadedKernel parse_kernel_description(std::string_view json) {
  const Reader read({}, "the bridge's kernel description");
  const nlohmann::json info = read.parse(json);
  LoadedKernel k;
  k.handle = read.field<int>(info, "handle");
  auto& sig = k.signature;
  sig.name = read.field<std::string>(info, "name");
  sig.full_name = read.field<std::string>(info, "full_name");
  sig.file = read.field_or<std::string>(info, "file", "");
  const auto params = read.field<nlohmann::json>(info, "params");
  if (!params.is_array()) read.fail("field 'params' is not a list");
  k.default_strings.resize(params.size());
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
    k.defaults.push_back(default_arg(read, described, k.default_strings[i]));
    pi.has_default = k.defaults.back().has_value();
    if (pi.has_default) pi.default_repr = read.field<std::string>(described, "repr");
    std::optional<std::uint8_t> annotated;
    if (!pi.annotation_type.empty() && !pi.is_constexpr) {
      annotated = parse_type_code(pi.annotation_type);
      if (!annotated) {
        raise<SourceError>({sig.name, pi.name, static_cast<std::ptrdiff_t>(i)},
                           "annotation '" + pi.annotation_type + "' names a type tritonrt does not know");
      }
    }
    const ParamRule rule = ParamRule::make(pi.is_constexpr, pi.is_const, !pi.do_not_specialize,
                                           !pi.do_not_specialize_on_alignment, annotated);
    sig.params.push_back(std::move(pi));
    k.param_rules.push_back(rule);
  }
  // String defaults point into default_strings, which no longer moves.
  for (std::size_t i = 0; i < k.defaults.size(); ++i) {
    auto& d = k.defaults[i];
    if (d && d->kind == ArgKind::string) {
      d->value.s = k.default_strings[i].data();
      d->size = k.default_strings[i].size();
    }
  }
  const auto autotune = read.field<nlohmann::json>(info, "autotune");
  if (!autotune.is_null()) {
    sig.autotuned = true;
    sig.autotune_configs = read.field<std::size_t>(autotune, "configs");
  }
  const auto heuristics = read.field<nlohmann::json>(info, "heuristics");
  if (!heuristics.is_array()) read.fail("field 'heuristics' is not a list");
  for (const auto& h : heuristics) sig.heuristic_params.push_back(read.as<std::string>(h, "heuristics[]"));
  return k;
}

SpecializationRules parse_specialization_rules(std::string_view json) {
  const Reader read({}, "the installed Triton's specialization rules");
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
    if (v < 1 || (v & (v - 1)) != 0) read.fail("give '" + std::string(key) + "' = " + std::to_string(v) + ", not a power of two");
    return v;
  };
  rules.int_divisibility = power_of_two("int_divisibility");
  rules.pointer_divisibility = power_of_two("pointer_divisibility");
  const auto pointers = read.field<nlohmann::json>(answer, "pointer_types");
  if (!pointers.is_array() || pointers.size() != kDTypeCount) read.fail("list no pointer type per dtype");
  for (int i = 0; i < kDTypeCount; ++i) {
    const auto& pair = pointers[i];
    if (!pair.is_array() || pair.size() != 2) read.fail("give no [plain, const] pointer type pair");
    rules.pointer_types[i] = {read.as<std::string>(pair[0], "pointer_types"), read.as<std::string>(pair[1], "pointer_types")};
  }
  return rules;
}

}  // namespace tritonrt::detail

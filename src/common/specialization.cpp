#include "common/specialization.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>

#include "tritonrt/error.h"
#include "tritonrt/tensor_descriptor.h"

namespace tritonrt::detail {
namespace {

using Key = ParamSpec::Key;

[[noreturn]] void fail(const KernelSignature& sig, std::size_t index, const std::string& what) {
  raise<ArgumentError>(param_site(sig, index), what);
}

bool is_number(ArgKind k) {
  return k == ArgKind::boolean || k == ArgKind::sint || k == ArgKind::uint || k == ArgKind::real;
}

// Integer value of a boolean/sint/uint argument as (negative?, magnitude bits).
struct IntValue {
  bool negative;
  std::int64_t i;
  std::uint64_t u;
};
IntValue int_value(ArgKind stored, const Arg& a) {
  if (stored == ArgKind::sint) return {a.value.i < 0, a.value.i, static_cast<std::uint64_t>(a.value.i)};
  return {false, static_cast<std::int64_t>(a.value.u), a.value.u};
}

bool fits(DType t, const IntValue& v) {
  auto in = [&](std::int64_t lo, std::uint64_t hi) { return v.negative ? v.i >= lo : v.u <= hi; };
  switch (t) {
    case DType::u1:
      return in(0, 1);
    case DType::i8:
      return in(INT8_MIN, INT8_MAX);
    case DType::i16:
      return in(INT16_MIN, INT16_MAX);
    case DType::i32:
      return in(INT32_MIN, INT32_MAX);
    case DType::i64:
      return in(INT64_MIN, INT64_MAX);
    case DType::u8:
      return in(0, UINT8_MAX);
    case DType::u16:
      return in(0, UINT16_MAX);
    case DType::u32:
      return in(0, UINT32_MAX);
    case DType::u64:
      return in(0, UINT64_MAX);
    default:
      return true;  // floating types take any integer, as Python's float() does
  }
}

std::string int_text(const IntValue& v) { return v.negative ? std::to_string(v.i) : std::to_string(v.u); }

// Triton's key for an integer of a fixed type: the value 1 keys as the integer 1.
Key int_key(const SpecializationRules& rules, const ParamRule& p, const IntValue& v) {
  if (p.specialize && rules.int_one_is_constexpr && !v.negative && v.u == 1) return Key::one;
  return divisibility_key(p, v.u, HotRules(rules).int_mask);
}

// A runtime parameter whose type is fixed (by annotation or by tritonrt::scalar). Runs on
// the launch path: the type's name is only spelled out for an error.
ParamCode specialize_fixed(const SpecializationRules& rules, const ParamRule& p, std::uint8_t code, const Arg& a,
                           const KernelSignature& sig, std::size_t index) {
  auto type = [&] { return type_name(rules, code); };
  if (TypeCode::is_pointer(code)) {
    if (a.kind != ArgKind::pointer)
      fail(sig, index, "expected a device pointer for type " + type() + ", got " + describe(a));
    return {code, divisibility_key(p, a.value.u, HotRules(rules).pointer_mask)};
  }
  const DType t = TypeCode::dtype(code);
  const ArgKind stored = a.value_kind();
  if (!is_number(stored)) fail(sig, index, "expected a number for type " + type() + ", got " + describe(a));
  if (stored == ArgKind::real) {
    if (!is_floating(t)) fail(sig, index, "expected an integer for type " + type() + ", got a floating-point value");
    return {code, Key::none};
  }
  const IntValue v = int_value(stored, a);
  if (!fits(t, v)) fail(sig, index, "value " + int_text(v) + " does not fit type " + type());
  // Triton never specializes floating-point or boolean runtime parameters.
  if (t == DType::u1 || is_floating(t) || !p.specialize) return {code, Key::none};
  return {code, int_key(rules, p, v)};
}

// "[1][0]": where an element sits in its parameter's tuple, for messages.
std::string element_path(std::span<const std::size_t> path) {
  std::string out;
  for (const std::size_t i : path) {
    out += '[';
    out += std::to_string(i);
    out += ']';
  }
  return out;
}

// Where an element sits in its parameter's tuples; of fixed depth, so that specializing a
// tuple allocates nothing.
struct ElementPath {
  static constexpr std::size_t kMaxDepth = 32;
  std::size_t at[kMaxDepth];
  std::size_t depth = 0;
  std::span<const std::size_t> span() const { return {at, depth}; }
};

[[noreturn]] void refuse_element(const KernelSignature& sig, std::size_t index, std::span<const std::size_t> path,
                                 std::string_view why) {
  raise<ArgumentError>(param_site(sig, index), "tuple element {}: {}", element_path(path), why);
}

// Enters element `i` of the current tuple.
void enter(ElementPath& path, std::size_t i, const KernelSignature& sig, std::size_t index) {
  if (path.depth == ElementPath::kMaxDepth) {
    raise<ArgumentError>(param_site(sig, index), "its tuples nest deeper than {} levels, tritonrt's limit",
                         ElementPath::kMaxDepth);
  }
  path.at[path.depth++] = i;
}

}  // namespace

ParamRule ParamRule::make(bool is_constexpr, bool is_const, bool specialize, bool align,
                          std::optional<std::uint8_t> annotated) {
  ParamRule r;
  r.is_constexpr = is_constexpr;
  r.specialize = specialize;
  r.annotated = is_constexpr ? std::nullopt : annotated;
  r.route = is_constexpr ? Route::constexpr_value : r.annotated ? Route::rare : Route::runtime;
  r.pointer_base = is_const ? TypeCode::kConstPointer : TypeCode::kPointer;
  r.key_otherwise = !specialize ? ParamSpec::Key::none : ParamSpec::Key::plain;
  r.key_if_divisible = !specialize ? ParamSpec::Key::none : align ? ParamSpec::Key::divisible : ParamSpec::Key::plain;
  return r;
}

std::optional<std::uint8_t> parse_type_code(std::string_view type) {
  bool pointer = false;
  bool is_const = false;
  if (type.starts_with("*k")) {
    pointer = is_const = true;
    type.remove_prefix(2);
  } else if (type.starts_with("*")) {
    pointer = true;
    type.remove_prefix(1);
  }
  const auto dtype = parse_dtype(type);
  if (!dtype) return std::nullopt;
  return pointer ? TypeCode::pointer(*dtype, is_const) : TypeCode::scalar(*dtype);
}

std::string type_name(const SpecializationRules& rules, std::uint8_t code) {
  if (code == TypeCode::kConstexpr) return "constexpr";
  const DType t = TypeCode::dtype(code);
  if (TypeCode::is_descriptor(code)) return "tensordesc<" + std::string(to_string(t)) + ">";
  if (TypeCode::is_pointer(code)) {
    return rules.pointer_types[static_cast<int>(t)][code >= TypeCode::kConstPointer ? 1 : 0];
  }
  return std::string(to_string(t));
}

std::string descriptor_type(const Arg& a, const SpecializationRules* rules) {
  const auto& d = *static_cast<const TensorDescriptor*>(a.object);
  std::string out = "tensordesc<" + std::string(to_string(d.dtype())) + "[";
  for (std::size_t i = 0; i < d.block_shape().size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(d.block_shape()[i]);
  }
  out += "]";
  if (const NvmmaSharedLayout* layout = d.layout()) {
    const auto value = [&](const std::string& field) -> std::string {
      const auto truth = [](bool b) { return b ? "True" : "False"; };
      if (field == "swizzle_byte_width") return std::to_string(layout->swizzle_byte_width);
      if (field == "element_bitwidth") return std::to_string(layout->element_bitwidth);
      if (field == "rank") return std::to_string(d.rank());
      if (field == "transposed") return truth(layout->transposed);
      return truth(layout->fp4_padded);
    };
    if (rules != nullptr && rules->nvmma_layout_class.empty()) {
      raise<ArgumentError>({},
                           "a tensor descriptor with a Gluon layout: Triton {} has no Gluon NVMMASharedLayout "
                           "whose printed form tritonrt can reproduce, so it cannot name the kernel's type",
                           rules->triton_version);
    }
    if (rules == nullptr) {
      out += ",NVMMASharedLayout(";
      for (const char* field : {"swizzle_byte_width", "element_bitwidth", "rank", "transposed", "fp4_padded"}) {
        out += std::string(field) + "=" + value(field) + (std::string_view(field) == "fp4_padded" ? "" : ", ");
      }
      return out + ")>";
    }
    out += "," + rules->nvmma_layout_class + "(";
    for (std::size_t i = 0; i < rules->nvmma_layout_fields.size(); ++i) {
      const auto& [field, fixed] = rules->nvmma_layout_fields[i];
      out += (i ? ", " : "") + field + "=" + (fixed ? *fixed : value(field));
    }
    out += ")";
  }
  return out + ">";
}

std::string describe(const Arg& a) {
  switch (a.kind) {
    case ArgKind::none:
      return "None";
    case ArgKind::boolean:
      return "a bool";
    case ArgKind::sint:
    case ArgKind::uint:
      return "an integer";
    case ArgKind::real:
      return "a floating-point value";
    case ArgKind::pointer:
      return "a device pointer (*" + std::string(to_string(a.dtype)) + ")";
    case ArgKind::string:
      return "a string";
    case ArgKind::typed:
      return "a scalar fixed to " + std::string(to_string(a.dtype));
    case ArgKind::dtype:
      return "a dtype";
    case ArgKind::python_default:
      return "the Python default";
    case ArgKind::unset:
      return "no value";
    case ArgKind::descriptor:
      return "a tensor descriptor (" + descriptor_type(a, nullptr) + ")";
    case ArgKind::tuple:
      return "a tuple of " + std::to_string(a.value.u);
  }
  return "an unknown value";
}

void bind_arguments(const KernelSignature& sig, std::span<const std::optional<Arg>> defaults,
                    std::span<const Arg> given, Arg* out) {
  const std::size_t n = sig.params.size();
  if (given.size() > n) {
    raise<ArgumentError>({sig.name}, "takes {} argument{}, {} were given", n, n == 1 ? "" : "s", given.size());
  }
  for (std::size_t i = 0; i < given.size(); ++i) out[i] = given[i];
  for (std::size_t i = given.size(); i < n; ++i) {
    if (defaults[i]) {
      out[i] = *defaults[i];
      continue;
    }
    fail(sig, i,
         "missing argument (kernel takes " + std::to_string(n) + ", " + std::to_string(given.size()) +
             " given, and this parameter has no default)");
  }
}

ParamCode specialize_rare_argument(const SpecializationRules& rules, const ParamRule& p, const Arg& a,
                                   const KernelSignature& sig, std::size_t index) {
  if (p.is_constexpr && a.kind == ArgKind::tuple) {
    // A constexpr tuple is part of the key by value: only values a key can hold.
    ElementPath path;
    const auto check = [&](const auto& self, const Arg& t) -> void {
      const auto elements = t.elements();
      for (std::size_t i = 0; i < elements.size(); ++i) {
        enter(path, i, sig, index);
        const ArgKind k = elements[i].kind;
        if (k == ArgKind::tuple) {
          self(self, elements[i]);
        } else if (k == ArgKind::pointer || k == ArgKind::descriptor || k == ArgKind::typed || k == ArgKind::unset ||
                   k == ArgKind::python_default) {
          refuse_element(sig, index, path.span(),
                         "is tl.constexpr: a tuple passed to it holds bools, integers, floats, strings, dtypes, None "
                         "and tuples of them, got " +
                             describe(elements[i]));
        }
        --path.depth;
      }
    };
    check(check, a);
    return {TypeCode::kConstexpr, Key::none};
  }
  if (p.is_constexpr) {
    if (a.kind == ArgKind::pointer || a.kind == ArgKind::descriptor)
      fail(sig, index, "is tl.constexpr: expected a bool, integer, float, string, dtype or None, got " + describe(a));
    fail(sig, index, "is tl.constexpr: tritonrt::scalar() fixes a runtime type; pass the plain value");
  }
  if (a.kind == ArgKind::string || a.kind == ArgKind::dtype) {
    fail(sig, index,
         std::string("only tl.constexpr parameters take ") + (a.kind == ArgKind::string ? "strings" : "dtypes"));
  }
  if (a.kind == ArgKind::unset) fail(sig, index, "has no value: it is set by a decorator, which has not set it");
  if (a.kind == ArgKind::python_default) {
    fail(sig, index,
         "its Python default (" + sig.params[index].default_repr +
             ") is not a value tritonrt can pass at run time; pass the argument explicitly");
  }
  if (a.kind == ArgKind::tuple) {
    if (p.annotated) fail(sig, index, "is annotated " + type_name(rules, *p.annotated) + ": got " + describe(a));
    return {TypeCode::kTuple, Key::none};  // its elements: specialize_tuple
  }
  if (a.kind == ArgKind::descriptor) {
    // Triton types a descriptor by its element type and block shape, and keys it with None.
    if (p.annotated) fail(sig, index, "is annotated " + type_name(rules, *p.annotated) + ": got " + describe(a));
    return {TypeCode::descriptor(a.dtype), Key::none};
  }
  if (p.annotated) {
    if (a.kind == ArgKind::none) fail(sig, index, "is annotated " + type_name(rules, *p.annotated) + ": got None");
    if (a.kind == ArgKind::typed && TypeCode::scalar(a.dtype) != *p.annotated) {
      fail(sig, index,
           "is annotated " + type_name(rules, *p.annotated) + ", but the caller fixed it to " +
               std::string(to_string(a.dtype)));
    }
    return specialize_fixed(rules, p, *p.annotated, a, sig, index);
  }
  if (a.kind == ArgKind::typed) return specialize_fixed(rules, p, TypeCode::scalar(a.dtype), a, sig, index);
  if (a.kind == ArgKind::real) {
    // inf and nan pass through as they do in Python; only finite values may not overflow fp32.
    if (rules.float_type != DType::fp32 || !std::isfinite(a.value.f) ||
        std::fabs(a.value.f) <= std::numeric_limits<float>::max()) {
      return {TypeCode::scalar(rules.float_type), Key::none};
    }
    std::ostringstream os;
    os << a.value.f;
    fail(sig, index,
         "value " + os.str() +
             " overflows fp32, the type Triton gives floating-point arguments; annotate the parameter or pass "
             "tritonrt::scalar(DType::fp64, v)");
  }
  fail(sig, index, "unsupported argument: " + describe(a));
}

namespace {

// Triton's binder specializes a tuple's elements as arguments of a plain parameter.
const ParamRule kTupleElementRule = ParamRule::make(false, false, true, true, std::nullopt);

// One element's code (not a tuple's), with the checks Triton's binder makes of it.
ParamCode element_code(const SpecializationRules& rules, const HotRules& hot, const Arg& e, const KernelSignature& sig,
                       std::size_t index, const ElementPath& path, void** param, std::uint64_t* slot) {
  const auto refuse = [&](std::string_view why) { refuse_element(sig, index, path.span(), why); };
  switch (e.kind) {
    case ArgKind::string:
    case ArgKind::dtype:
      refuse_element(sig, index, path.span(),
                     "only tl.constexpr parameters take " +
                         std::string(e.kind == ArgKind::string ? "strings" : "dtypes") + ", not a tuple's elements");
    case ArgKind::python_default:
    case ArgKind::unset:
      refuse_element(sig, index, path.span(), "got " + describe(e));
    default:
      break;
  }
  ParamCode code;
  try {
    code = param != nullptr ? specialize_argument<true>(rules, hot, kTupleElementRule, e, sig, index, param, slot)
                            : specialize_argument<false>(rules, hot, kTupleElementRule, e, sig, index);
  } catch (const ArgumentError& error) {
    // The parameter's message, said of the element.
    std::string_view what = error.what();
    const std::string prefix = error_message(param_site(sig, index), "");
    if (what.starts_with(prefix)) what.remove_prefix(prefix.size());
    refuse(what);
  }
  // The constexpr elements a tuple can have, keyed by value as Triton keys them.
  if (code.type == TypeCode::kConstexpr) code.key = e.kind == ArgKind::none ? Key::none : Key::one;
  return code;
}

void tuple_codes(const SpecializationRules& rules, const HotRules& hot, const Arg& tuple, const KernelSignature& sig,
                 std::size_t index, ElementPath& path, TupleSink& sink) {
  const auto push = [&](ParamCode code) {
    if (sink.code_count == sink.code_capacity) {
      raise<ArgumentError>(param_site(sig, index), "its tuple has more than {} elements and levels, tritonrt's limit",
                           sink.code_capacity);
    }
    sink.codes[sink.code_count++] = code;
  };
  push({TypeCode::kTuple, Key::none});
  const auto elements = tuple.elements();
  for (std::size_t i = 0; i < elements.size(); ++i) {
    enter(path, i, sig, index);
    const Arg& e = elements[i];
    if (e.kind == ArgKind::tuple) {
      tuple_codes(rules, hot, e, sig, index, path, sink);
    } else if (sink.params == nullptr) {
      push(element_code(rules, hot, e, sig, index, path, nullptr, nullptr));
    } else {
      if (sink.param_count == sink.param_capacity) {
        raise<ArgumentError>(param_site(sig, index), "the call passes more than {} runtime values, tritonrt's limit",
                             sink.param_capacity);
      }
      void* param = nullptr;
      const ParamCode code = element_code(rules, hot, e, sig, index, path, &param, &sink.slots[sink.slot_count]);
      push(code);
      if (code.type != TypeCode::kConstexpr) {
        if (param == &sink.slots[sink.slot_count]) ++sink.slot_count;
        sink.params[sink.param_count++] = param;
      }
    }
    --path.depth;
  }
  push({TypeCode::kTupleEnd, Key::none});
}

std::string key_repr(const ParamSpec& p) {
  if (p.type == "constexpr") return p.value;
  switch (p.key) {
    case Key::none:
      return "None";
    case Key::plain:
      return "''";
    case Key::divisible:
      return "'D'";
    case Key::one:
      return "1";
  }
  return "None";
}

// The keys of a tuple's entry, as Python prints the tuple of them.
std::string tuple_keys(const ParamSpec& tuple) {
  std::string out = "(";
  for (std::size_t i = 0; i < tuple.elements.size(); ++i) {
    const ParamSpec& e = tuple.elements[i];
    if (i) out += ", ";
    out += e.is_tuple() ? tuple_keys(e) : key_repr(e);
  }
  return out + (tuple.elements.size() == 1 ? ",)" : ")");
}

ParamSpec tuple_entry(const SpecializationRules& rules, const HotRules& hot, const Arg& tuple,
                      const KernelSignature& sig, std::size_t index, ElementPath& path) {
  ParamSpec out;
  out.type = "(";
  const auto elements = tuple.elements();
  for (std::size_t i = 0; i < elements.size(); ++i) {
    enter(path, i, sig, index);
    const Arg& e = elements[i];
    ParamSpec p;
    if (e.kind == ArgKind::tuple) {
      p = tuple_entry(rules, hot, e, sig, index, path);
    } else {
      const ParamCode code = element_code(rules, hot, e, sig, index, path, nullptr, nullptr);
      p.type = TypeCode::is_descriptor(code.type) ? descriptor_type(e, &rules) : type_name(rules, code.type);
      p.key = code.key;
      if (code.type == TypeCode::kConstexpr) {
        p.key = Key::none;
        p.value = e.kind == ArgKind::none ? "None" : "1";
      }
    }
    out.type += (i ? ", " : "") + (p.is_tuple() ? p.type : "'" + p.type + "'");
    out.elements.push_back(std::move(p));
    --path.depth;
  }
  out.type += elements.size() == 1 ? ",)" : ")";
  return out;
}

// Python's repr() of a float: shortest round-trip digits, exponent form outside 1e-4..1e16.
std::string float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  const auto e = sci.find('e');
  std::string mantissa = sci.substr(0, e);
  const int exponent = std::stoi(sci.substr(e + 1));
  const bool negative = mantissa[0] == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (char c : mantissa) {
    if (c != '.') digits += c;
  }
  const int point = exponent + 1;  // digits are 0.d1d2... x 10^point
  std::string out = negative ? "-" : "";
  if (point > 16 || point < -3) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char ebuf[16];
    std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out + ebuf;
  }
  if (point <= 0) return out + "0." + std::string(-point, '0') + digits;
  if (static_cast<int>(digits.size()) <= point) return out + digits + std::string(point - digits.size(), '0') + ".0";
  return out + digits.substr(0, point) + "." + digits.substr(point);
}

std::string string_repr(std::string_view s) {
  const bool use_double = s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos;
  const char quote = use_double ? '"' : '\'';
  std::string out(1, quote);
  for (unsigned char c : s) {
    if (c == '\\' || c == quote) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + quote;
}

}  // namespace

void specialize_tuple(const SpecializationRules& rules, const Arg& tuple, const KernelSignature& sig, std::size_t index,
                      TupleSink& sink) {
  ElementPath path;
  tuple_codes(rules, HotRules(rules), tuple, sig, index, path, sink);
}

ParamSpec tuple_spec(const SpecializationRules& rules, const Arg& tuple, const KernelSignature& sig,
                     std::size_t index) {
  ElementPath path;
  return tuple_entry(rules, HotRules(rules), tuple, sig, index, path);
}

std::string dtype_text(DType type, ArgSource source) {
  if (source == ArgSource::tensor && !torch_name(type).empty()) return "torch." + std::string(torch_name(type));
  return std::string(to_string(type));
}

std::string python_repr(const Arg& a, const ParamInfo& param) {
  switch (a.kind) {
    case ArgKind::none:
      return "None";
    case ArgKind::boolean:
      return a.value.u ? "True" : "False";
    case ArgKind::sint:
      return std::to_string(a.value.i);
    case ArgKind::uint:
      return std::to_string(a.value.u);
    case ArgKind::real:
      return float_repr(a.value.f);
    case ArgKind::string:
      return string_repr(std::string_view(a.value.s, a.size));
    case ArgKind::dtype:
      return "triton.language." + std::string(language_name(a.dtype));
    case ArgKind::python_default:
      return param.default_repr;
    case ArgKind::tuple: {
      const auto elements = a.elements();
      std::string out = "(";
      for (std::size_t i = 0; i < elements.size(); ++i) out += (i ? ", " : "") + python_repr(elements[i], param);
      return out + (elements.size() == 1 ? ",)" : ")");
    }
    default:
      return describe(a);
  }
}

}  // namespace tritonrt::detail

namespace tritonrt {

std::vector<std::int64_t> ParamSpec::descriptor_block_shape() const {
  // What descriptor_type writes, read back: anything but positive integers in the brackets is
  // not a block shape.
  const std::string_view type = this->type;
  if (!type.starts_with("tensordesc<")) return {};
  const auto open = type.find('[');
  const auto close = type.find(']', open);
  if (open == std::string_view::npos || close == std::string_view::npos) return {};
  std::vector<std::int64_t> dims;
  for (std::size_t at = open + 1; at <= close;) {
    while (type[at] == ' ') ++at;
    std::int64_t dim = 0;
    const auto [end, error] = std::from_chars(type.data() + at, type.data() + close, dim);
    std::size_t next = static_cast<std::size_t>(end - type.data());
    while (type[next] == ' ') ++next;
    if (error != std::errc() || dim <= 0 || (next != close && type[next] != ',')) return {};
    dims.push_back(dim);
    at = next + 1;
  }
  return dims;
}

std::string Specialization::repr() const {
  std::string out = "[";
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& p = params[i];
    if (i) out += ", ";
    out += p.is_tuple() ? "(" + p.type + ", " + detail::tuple_keys(p) + ")"
                        : "('" + p.type + "', " + detail::key_repr(p) + ")";
  }
  return out + "]";
}

}  // namespace tritonrt

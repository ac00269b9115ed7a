// The scalar kinds' home: None, bools, integers, floats, strings, fixed-type scalars, dtypes,
// and the placeholders (a parameter's Python default, a value a decorator has yet to set).
#include <charconv>
#include <climits>
#include <cstdio>
#include <cmath>
#include <limits>
#include <sstream>

#include "common/kinds/kinds.h"
#include "tritonrt/error.h"

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

// A typed header's C++ spellings of values (tools/typed_header.cpp).

std::string double_literal(double value) {
  if (std::isnan(value)) return "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(value))
    return value > 0 ? "std::numeric_limits<double>::infinity()" : "-std::numeric_limits<double>::infinity()";
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", value);
  std::string out = text;
  if (out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}

std::string int64_literal(std::int64_t value) {
  // -9223372036854775808 is no literal: the negation of one too large for the type.
  if (value == std::numeric_limits<std::int64_t>::min()) return "std::numeric_limits<std::int64_t>::min()";
  return "std::int64_t{" + std::to_string(value) + "}";
}

// A fixed-type scalar passed through scalar(), its number as the call stored it.
std::string typed_header_value(const Arg& a) {
  const std::string number = a.stored == ArgKind::real      ? double_literal(a.value.f)
                             : a.stored == ArgKind::boolean ? std::string(a.value.u != 0 ? "true" : "false")
                             : a.stored == ArgKind::sint    ? int64_literal(a.value.i)
                                                            : "std::uint64_t{" + std::to_string(a.value.u) + "u}";
  return "tritonrt::scalar(" + dtype_enumerator(a.dtype) + ", " + number + ")";
}

// A fixed-type scalar: its C++ type (double for fp16, bf16 and bool), passed through scalar().
HeaderParam typed_header_param(const Arg& a, const std::string& name, const std::string& token) {
  const std::string element = element_type(a.dtype);
  const std::string type = !element.empty() && a.dtype != DType::u1 ? element : "double";
  return {type, "tritonrt::scalar(" + dtype_enumerator(a.dtype) + ", " + name + ")", token};
}

ParamCode specialize_none(const SpecializationRules& rules, const ParamRule& p, const Arg& a,
                          const KernelSignature& sig, std::size_t index) {
  refuse_annotation(rules, p, a, sig, index);
  fail(sig, index, "unsupported argument: " + describe(a));
}

ParamCode specialize_real(const SpecializationRules& rules, const ParamRule& p, const Arg& a,
                          const KernelSignature& sig, std::size_t index) {
  if (p.annotated) return specialize_fixed(rules, p, *p.annotated, a, sig, index);
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

ParamCode refuse_typed_constexpr(const SpecializationRules&, const ParamRule&, const Arg&, const KernelSignature& sig,
                                 std::size_t index) {
  fail(sig, index, "is tl.constexpr: tritonrt::scalar() fixes a runtime type; pass the plain value");
}

ParamCode specialize_typed(const SpecializationRules& rules, const ParamRule& p, const Arg& a,
                           const KernelSignature& sig, std::size_t index) {
  if (!p.annotated) return specialize_fixed(rules, p, TypeCode::scalar(a.dtype), a, sig, index);
  if (TypeCode::scalar(a.dtype) != *p.annotated) {
    fail(sig, index,
         "is annotated " + type_name(rules, *p.annotated) + ", but the caller fixed it to " +
             std::string(to_string(a.dtype)));
  }
  return specialize_fixed(rules, p, *p.annotated, a, sig, index);
}

ParamCode refuse_string(const SpecializationRules&, const ParamRule&, const Arg&, const KernelSignature& sig,
                        std::size_t index) {
  fail(sig, index, "only tl.constexpr parameters take strings");
}

ParamCode refuse_dtype(const SpecializationRules&, const ParamRule&, const Arg&, const KernelSignature& sig,
                       std::size_t index) {
  fail(sig, index, "only tl.constexpr parameters take dtypes");
}

ParamCode refuse_python_default(const SpecializationRules&, const ParamRule&, const Arg&, const KernelSignature& sig,
                                std::size_t index) {
  fail(sig, index,
       "its Python default (" + sig.params[index].default_repr +
           ") is not a value tritonrt can pass at run time; pass the argument explicitly");
}

ParamCode refuse_unset(const SpecializationRules&, const ParamRule&, const Arg&, const KernelSignature& sig,
                       std::size_t index) {
  fail(sig, index, "has no value: it is set by a decorator, which has not set it");
}

}  // namespace

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

const KindOps kNoneKind{
    .describe = [](const Arg&) -> std::string { return "None"; },
    .repr = [](const Arg&, const ParamInfo&) -> std::string { return "None"; },
    .specialize_constexpr = constexpr_by_value,
    .specialize_runtime = specialize_none,
    .key_repr = nullptr,
    .in_constexpr_tuple = true,
    .header_value = [](const Arg&) -> std::string { return "std::nullopt"; },
    .header_param = nullptr,
};

const KindOps kBooleanKind{
    .describe = [](const Arg&) -> std::string { return "a bool"; },
    .repr = [](const Arg& a, const ParamInfo&) -> std::string { return a.value.u ? "True" : "False"; },
    .specialize_constexpr = constexpr_by_value,
    .specialize_runtime = annotated_or_unsupported,
    .key_repr = nullptr,
    .in_constexpr_tuple = true,
    .header_value = [](const Arg& a) -> std::string { return a.value.u != 0 ? "true" : "false"; },
    .header_param = [](const Arg&, const std::string& name, const std::string&) -> HeaderParam {
      return {"bool", name, "bool"};
    },
};

const KindOps kSintKind{
    .describe = [](const Arg&) -> std::string { return "an integer"; },
    .repr = [](const Arg& a, const ParamInfo&) { return std::to_string(a.value.i); },
    .specialize_constexpr = constexpr_by_value,
    .specialize_runtime = annotated_or_unsupported,
    .key_repr = nullptr,
    .in_constexpr_tuple = true,
    .header_value = [](const Arg& a) { return int64_literal(a.value.i); },
    .header_param = [](const Arg&, const std::string& name, const std::string&) -> HeaderParam {
      return {"std::int64_t", name, "int"};
    },
};

const KindOps kUintKind{
    .describe = [](const Arg&) -> std::string { return "an integer"; },
    .repr = [](const Arg& a, const ParamInfo&) { return std::to_string(a.value.u); },
    .specialize_constexpr = constexpr_by_value,
    .specialize_runtime = annotated_or_unsupported,
    .key_repr = nullptr,
    .in_constexpr_tuple = true,
    .header_value = [](const Arg& a) { return "std::uint64_t{" + std::to_string(a.value.u) + "u}"; },
    .header_param = [](const Arg&, const std::string& name, const std::string&) -> HeaderParam {
      return {"std::uint64_t", name, "int"};
    },
};

const KindOps kRealKind{
    .describe = [](const Arg&) -> std::string { return "a floating-point value"; },
    .repr = [](const Arg& a, const ParamInfo&) { return float_repr(a.value.f); },
    .specialize_constexpr = constexpr_by_value,
    .specialize_runtime = specialize_real,
    .key_repr = nullptr,
    .in_constexpr_tuple = true,
    .header_value = [](const Arg& a) { return "double{" + double_literal(a.value.f) + "}"; },
    .header_param = [](const Arg&, const std::string& name, const std::string&) -> HeaderParam {
      return {"double", name, "float"};
    },
};

const KindOps kStringKind{
    .describe = [](const Arg&) -> std::string { return "a string"; },
    .repr = [](const Arg& a, const ParamInfo&) { return string_repr(std::string_view(a.value.s, a.size)); },
    .specialize_constexpr = constexpr_by_value,
    .specialize_runtime = refuse_string,
    .key_repr = [](const Arg& a) { return "'" + std::string(a.value.s, a.size) + "'"; },
    .in_constexpr_tuple = true,
    .header_value =
        [](const Arg& a) { return "std::string_view{" + string_literal(std::string_view(a.value.s, a.size)) + "}"; },
    .header_param = nullptr,
};

const KindOps kTypedKind{
    .describe = [](const Arg& a) { return "a scalar fixed to " + std::string(to_string(a.dtype)); },
    .repr = nullptr,
    .specialize_constexpr = refuse_typed_constexpr,
    .specialize_runtime = specialize_typed,
    .key_repr = nullptr,
    .in_constexpr_tuple = false,
    .header_value = typed_header_value,
    .header_param = typed_header_param,
};

const KindOps kDtypeKind{
    .describe = [](const Arg&) -> std::string { return "a dtype"; },
    .repr = [](const Arg& a, const ParamInfo&) { return "triton.language." + std::string(language_name(a.dtype)); },
    .specialize_constexpr = constexpr_by_value,
    .specialize_runtime = refuse_dtype,
    .key_repr = [](const Arg& a) { return "'" + dtype_text(a.dtype, a.source) + "'"; },
    .in_constexpr_tuple = true,
    .header_value = [](const Arg& a) { return dtype_enumerator(a.dtype); },
    .header_param = nullptr,
};

const KindOps kPythonDefaultKind{
    .describe = [](const Arg&) -> std::string { return "the Python default"; },
    .repr = [](const Arg&, const ParamInfo& param) { return param.default_repr; },
    .specialize_constexpr = constexpr_by_value,
    .specialize_runtime = refuse_python_default,
    .key_repr = nullptr,
    .in_constexpr_tuple = false,
    .header_value = nullptr,
    .header_param = nullptr,
};

const KindOps kUnsetKind{
    .describe = [](const Arg&) -> std::string { return "no value"; },
    .repr = nullptr,
    .specialize_constexpr = constexpr_by_value,
    .specialize_runtime = refuse_unset,
    .key_repr = nullptr,
    .in_constexpr_tuple = false,
    .header_value = nullptr,
    .header_param = nullptr,
};

}  // namespace tritonrt::detail

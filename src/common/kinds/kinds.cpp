#include "common/kinds/kinds.h"

#include <cstdio>

namespace tritonrt::detail {

ParamCode constexpr_by_value(const SpecializationRules&, const ParamRule&, const Arg&, const KernelSignature&,
                             std::size_t) {
  return {TypeCode::kConstexpr, ParamSpec::Key::none};
}

ParamCode annotated_or_unsupported(const SpecializationRules& rules, const ParamRule& p, const Arg& a,
                                   const KernelSignature& sig, std::size_t index) {
  if (p.annotated) return specialize_fixed(rules, p, *p.annotated, a, sig, index);
  raise<ArgumentError>(param_site(sig, index), "unsupported argument: {}", describe(a));
}

ParamCode refuse_as_constexpr(const SpecializationRules&, const ParamRule&, const Arg& a, const KernelSignature& sig,
                              std::size_t index) {
  raise<ArgumentError>(param_site(sig, index),
                       "is tl.constexpr: expected a bool, integer, float, string, dtype or None, got " + describe(a));
}

void refuse_annotated(const SpecializationRules& rules, const ParamRule& p, const Arg& a, const KernelSignature& sig,
                      std::size_t index) {
  raise<ArgumentError>(param_site(sig, index), "is annotated {}: got {}", type_name(rules, *p.annotated), describe(a));
}

std::string dtype_enumerator(DType type) { return "tritonrt::DType::" + std::string(to_string(type)); }

std::string element_type(DType type) {
  switch (type) {
    case DType::u1:
      return "bool";
    case DType::i8:
      return "std::int8_t";
    case DType::i16:
      return "std::int16_t";
    case DType::i32:
      return "std::int32_t";
    case DType::i64:
      return "std::int64_t";
    case DType::u8:
      return "std::uint8_t";
    case DType::u16:
      return "std::uint16_t";
    case DType::u32:
      return "std::uint32_t";
    case DType::u64:
      return "std::uint64_t";
    case DType::fp32:
      return "float";
    case DType::fp64:
      return "double";
    default:
      return "";
  }
}

std::string string_literal(std::string_view text) {
  std::string out = "\"";
  for (const unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char octal[8];
      std::snprintf(octal, sizeof octal, "\\%03o", c);
      out += octal;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string describe(const Arg& a) { return kind_ops(a.kind).describe(a); }

std::string python_repr(const Arg& a, const ParamInfo& param) {
  const KindOps& ops = kind_ops(a.kind);
  return ops.repr != nullptr ? ops.repr(a, param) : ops.describe(a);
}

}  // namespace tritonrt::detail

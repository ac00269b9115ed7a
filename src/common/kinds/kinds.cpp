#include "common/kinds/kinds.h"

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

std::string describe(const Arg& a) { return kind_ops(a.kind).describe(a); }

std::string python_repr(const Arg& a, const ParamInfo& param) {
  const KindOps& ops = kind_ops(a.kind);
  return ops.repr != nullptr ? ops.repr(a, param) : ops.describe(a);
}

}  // namespace tritonrt::detail

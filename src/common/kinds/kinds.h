// What each argument kind does off the launch path, in one file per kind (scalar.cpp: None,
// bools, numbers, strings, dtypes and the placeholders; pointer.cpp; descriptor.cpp;
// tuple.cpp), found through one table indexed by ArgKind (below). The launch path's
// share of each kind stays inline in specialization.h; the Python side of each kind lives in
// python_compiler/kinds/.
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <cstddef>
#include <string>

#include "common/specialization.h"

namespace tritonrt::detail {

inline constexpr std::size_t kArgKindCount = static_cast<std::size_t>(ArgKind::tuple) + 1;

/// Specializes an argument that specialize_argument's inline path did not take; throws
/// ArgumentError naming kernel and parameter where the kind cannot be the parameter's.
using RareSpecializer = ParamCode (*)(const SpecializationRules& rules, const ParamRule& param, const Arg& arg,
                                      const KernelSignature& signature, std::size_t index);

/// One kind's operations.
struct KindOps {
  /// The value in words, for messages ("a device pointer (*fp16)").
  std::string (*describe)(const Arg& arg);
  /// repr() of the value as Python prints a constexpr; nullptr where no constexpr holds one
  /// (then `describe`'s words stand in).
  std::string (*repr)(const Arg& arg, const ParamInfo& param);
  /// An argument of a tl.constexpr parameter.
  RareSpecializer specialize_constexpr;
  /// An argument of a runtime parameter: annotated parameters, fixed-type scalars, floats
  /// that overflow fp32, tuples and descriptors, and every refusal.
  RareSpecializer specialize_runtime;
  /// Whether a constexpr tuple may hold it (a value the call's key holds).
  bool in_constexpr_tuple;
};

// Each kind's entry, defined in its home.
extern const KindOps kNoneKind, kBooleanKind, kSintKind, kUintKind, kRealKind, kStringKind, kTypedKind, kDtypeKind,
    kPythonDefaultKind, kUnsetKind;    // scalar.cpp
extern const KindOps kPointerKind;     // pointer.cpp
extern const KindOps kDescriptorKind;  // descriptor.cpp
extern const KindOps kTupleKind;       // tuple.cpp

/// The table: each ArgKind's entry at its index.
inline constexpr std::array<const KindOps*, kArgKindCount> kKinds = [] {
  std::array<const KindOps*, kArgKindCount> table{};
  const auto set = [&](ArgKind kind, const KindOps& ops) { table[static_cast<std::size_t>(kind)] = &ops; };
  set(ArgKind::none, kNoneKind);
  set(ArgKind::boolean, kBooleanKind);
  set(ArgKind::sint, kSintKind);
  set(ArgKind::uint, kUintKind);
  set(ArgKind::real, kRealKind);
  set(ArgKind::pointer, kPointerKind);
  set(ArgKind::string, kStringKind);
  set(ArgKind::typed, kTypedKind);
  set(ArgKind::dtype, kDtypeKind);
  set(ArgKind::python_default, kPythonDefaultKind);
  set(ArgKind::unset, kUnsetKind);
  set(ArgKind::descriptor, kDescriptorKind);
  set(ArgKind::tuple, kTupleKind);
  return table;
}();
static_assert(std::ranges::none_of(kKinds, [](const KindOps* ops) { return ops == nullptr; }),
              "every ArgKind has its entry");

inline const KindOps& kind_ops(ArgKind kind) {
  assert(static_cast<std::size_t>(kind) < kKinds.size() && "an ArgKind out of range");  // kinds come from C++ or checked JSON
  return *kKinds[static_cast<std::size_t>(kind)];
}

// What the homes share.

/// A constexpr's argument that its value keys: nothing to check.
ParamCode constexpr_by_value(const SpecializationRules& rules, const ParamRule& param, const Arg& arg,
                             const KernelSignature& signature, std::size_t index);
/// A runtime parameter whose type is fixed (by annotation or by tritonrt::scalar) to `code`.
ParamCode specialize_fixed(const SpecializationRules& rules, const ParamRule& param, std::uint8_t code, const Arg& arg,
                           const KernelSignature& signature, std::size_t index);
/// A kind that only an annotated runtime parameter takes out of line: its annotated type, else
/// "unsupported argument".
ParamCode annotated_or_unsupported(const SpecializationRules& rules, const ParamRule& param, const Arg& arg,
                                   const KernelSignature& signature, std::size_t index);
/// A constexpr's argument of a kind that holds no Python value: "expected a bool, ...".
ParamCode refuse_as_constexpr(const SpecializationRules& rules, const ParamRule& param, const Arg& arg,
                              const KernelSignature& signature, std::size_t index);
/// "is annotated i64: got <what>", for a kind no annotation admits.
[[noreturn]] [[gnu::cold]] void refuse_annotated(const SpecializationRules& rules, const ParamRule& param,
                                                 const Arg& arg, const KernelSignature& signature, std::size_t index);
/// Inline: descriptors and tuples pass here on every launch.
inline void refuse_annotation(const SpecializationRules& rules, const ParamRule& param, const Arg& arg,
                              const KernelSignature& signature, std::size_t index) {
  if (param.annotated) [[unlikely]]
    refuse_annotated(rules, param, arg, signature, index);
}

/// The keys of a tuple's entry of Triton's specialization list, as Python prints the tuple of
/// them (tuple.cpp).
std::string tuple_keys(const ParamSpec& tuple);

}  // namespace tritonrt::detail

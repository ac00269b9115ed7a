// What each argument kind does off the launch path, in one file per kind (scalar.cpp: None,
// bools, numbers, strings, dtypes and the placeholders; pointer.cpp; descriptor.cpp;
// tuple.cpp), found through one table indexed by ArgKind (below). The launch path's
// share of each kind stays inline in specialization.h; the Python side of each kind lives in
// python_compiler/kinds/.
#pragma once

#include <array>
#include <cassert>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "common/specialization.h"

namespace tritonrt::detail {

inline constexpr std::size_t kArgKindCount = static_cast<std::size_t>(ArgKind::tuple) + 1;

/// Specializes an argument that specialize_argument's inline path did not take; throws
/// ArgumentError naming kernel and parameter where the kind cannot be the parameter's.
using RareSpecializer = ParamCode (*)(const SpecializationRules& rules, const ParamRule& param, const Arg& arg,
                                      const KernelSignature& signature, std::size_t index);

/// A runtime parameter of a typed header's launch function (`tritonrt header`).
struct HeaderParam {
  std::string type;        ///< its C++ type: "const float*"
  std::string expression;  ///< what the launch passes: the parameter, or an expression of it
  std::string shown;       ///< its type as the function's comment shows it: "*fp32", "int"
};

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
  /// The value as a tuning key's tuple prints it, in messages and in the key its choice is
  /// filed under (Triton keys on str() of a pointer's dtype); nullptr where `repr`'s text stands.
  std::string (*key_repr)(const Arg& arg);
  /// Whether a constexpr tuple may hold it (a value the call's key holds).
  bool in_constexpr_tuple;
  /// The C++ expression passing the value as the call passed it, for a typed header that fixes
  /// it (a constexpr's argument, None, a string, a dtype); nullptr where a header cannot.
  std::string (*header_value)(const Arg& arg);
  /// The typed header's parameter `name` taking a runtime argument of this kind, whose call
  /// wrote `token`; nullptr where a header always fixes the kind (then `header_value` is set)
  /// or takes no argument of it.
  HeaderParam (*header_param)(const Arg& arg, const std::string& name, const std::string& token);
};

// Each kind's entry, defined in its home.
extern const KindOps kNoneKind, kBooleanKind, kSintKind, kUintKind, kRealKind, kStringKind, kTypedKind, kDtypeKind,
    kPythonDefaultKind, kUnsetKind;    // scalar.cpp
extern const KindOps kPointerKind;     // pointer.cpp
extern const KindOps kDescriptorKind;  // descriptor.cpp
extern const KindOps kTupleKind;       // tuple.cpp

/// A table indexed by ArgKind, made from (kind, entry) pairs, and whether each kind was given
/// exactly one entry. That is counted by kind: a sanitized build cannot compare the entries'
/// addresses with null at compile time.
template <class Ops>
struct KindTable {
  std::array<const Ops*, kArgKindCount> entries{};
  bool complete = true;
};
template <class Ops, std::size_t N>
constexpr KindTable<Ops> make_kind_table(const std::pair<ArgKind, const Ops*> (&pairs)[N]) {
  KindTable<Ops> table;
  std::array<int, kArgKindCount> given{};
  for (const auto& [kind, ops] : pairs) {
    table.entries[static_cast<std::size_t>(kind)] = ops;
    ++given[static_cast<std::size_t>(kind)];
  }
  for (const int n : given) table.complete = table.complete && n == 1;
  return table;
}

/// The table: each ArgKind's entry at its index.
inline constexpr KindTable<KindOps> kKindTable = make_kind_table<KindOps>({
    {ArgKind::none, &kNoneKind},
    {ArgKind::boolean, &kBooleanKind},
    {ArgKind::sint, &kSintKind},
    {ArgKind::uint, &kUintKind},
    {ArgKind::real, &kRealKind},
    {ArgKind::pointer, &kPointerKind},
    {ArgKind::string, &kStringKind},
    {ArgKind::typed, &kTypedKind},
    {ArgKind::dtype, &kDtypeKind},
    {ArgKind::python_default, &kPythonDefaultKind},
    {ArgKind::unset, &kUnsetKind},
    {ArgKind::descriptor, &kDescriptorKind},
    {ArgKind::tuple, &kTupleKind},
});
static_assert(kKindTable.complete, "every ArgKind has one entry");
inline constexpr const auto& kKinds = kKindTable.entries;

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

// A typed header's C++ spellings (tools/typed_header.cpp).

/// The enumerator of `type` in tritonrt::DType: its name is Triton's.
std::string dtype_enumerator(DType type);
/// The C++ element type a pointer to `type` is, or "" where C++ has none (fp16, bf16, fp8).
std::string element_type(DType type);
/// A C++ string literal of `text`.
std::string string_literal(std::string_view text);

/// The keys of a tuple's entry of Triton's specialization list, as Python prints the tuple of
/// them (tuple.cpp).
std::string tuple_keys(const ParamSpec& tuple);

}  // namespace tritonrt::detail

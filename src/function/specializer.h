// Triton's call specialization, applied in C++: which Triton type and key each argument
// gets. The rules themselves are read from the installed Triton (see bridge.py).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tritonrt/arg.h"
#include "tritonrt/artifact.h"
#include "tritonrt/jit_function.h"

namespace tritonrt::detail {

/// What the installed Triton answered when asked how it specializes values.
struct SpecializationRules {
  std::string triton_version;
  DType bool_type = DType::u1;
  DType float_type = DType::fp32;
  bool int_one_is_constexpr = true;
  std::int64_t int_divisibility = 16;
  std::int64_t pointer_divisibility = 16;
  /// Per DType: the pointer type name, plain and const ("*fp32", "*kfp32").
  std::array<std::array<std::string, 2>, kDTypeCount> pointer_types;
};

/// A Triton type in one byte: constexpr, a scalar DType, or a (const) pointer to one.
struct TypeCode {
  static constexpr std::uint8_t kConstexpr = 0;
  static constexpr std::uint8_t kScalar = 1;
  static constexpr std::uint8_t kPointer = 64;
  static constexpr std::uint8_t kConstPointer = 128;

  static constexpr std::uint8_t scalar(DType t) { return kScalar + static_cast<std::uint8_t>(t); }
  static constexpr std::uint8_t pointer(DType t, bool is_const) {
    return (is_const ? kConstPointer : kPointer) + static_cast<std::uint8_t>(t);
  }
  static constexpr bool is_pointer(std::uint8_t c) { return c >= kPointer; }
  static constexpr DType dtype(std::uint8_t c) {
    return static_cast<DType>(c >= kConstPointer ? c - kConstPointer
                              : c >= kPointer    ? c - kPointer
                                                 : c - kScalar);
  }
};

/// The specialization of one argument.
struct ParamCode {
  std::uint8_t type;  // trivial, so arrays of codes cost nothing to declare on the hot path
  ParamSpec::Key key;
  friend bool operator==(const ParamCode&, const ParamCode&) = default;
};

/// A parameter as the specializer needs it: the static info in compact form.
struct ParamRule {
  bool is_constexpr = false;
  bool is_const = false;
  bool specialize = true;  ///< not do_not_specialize
  bool align = true;       ///< not do_not_specialize_on_alignment
  std::optional<std::uint8_t> annotated;  ///< TypeCode of the annotated Triton type
  std::optional<Arg> default_value;       ///< Arg form of the Python default, if any
};

/// Parses an annotated Triton type ("i64", "*fp16", "*kbf16"); nullopt for others.
std::optional<std::uint8_t> parse_type_code(std::string_view type);
/// Triton's name of a type code ("i32", "*fp16", "constexpr").
std::string type_name(const SpecializationRules& rules, std::uint8_t code);

/// Fills `out` (one slot per parameter) from the given arguments and the Python defaults;
/// throws ArgumentError on a count mismatch or a missing argument without default.
void bind_arguments(const KernelSignature& signature, std::span<const ParamRule> rules,
                    std::span<const Arg> given, Arg* out);

/// Triton's (type, key) for one argument; throws ArgumentError naming kernel and parameter.
ParamCode specialize_argument(const SpecializationRules& rules, const ParamRule& param,
                              const Arg& arg, const KernelSignature& signature, std::size_t index);

/// repr() of a constexpr value as Python prints it.
std::string python_repr(const Arg& value, const ParamInfo& param);

/// The readable name of an argument kind, for error messages ("a device pointer").
std::string describe(const Arg& arg);

}  // namespace tritonrt::detail

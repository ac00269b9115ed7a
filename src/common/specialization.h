// Triton's call specialization, applied in C++: which Triton type and key each argument
// gets. The rules themselves are read from the installed Triton (see python_compiler/bridge/rules.py);
// this is the vocabulary every layer shares (type codes, parameter rules, binding).
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/errors.h"
#include "tritonrt/arg.h"
#include "tritonrt/artifact.h"
#include "tritonrt/signature.h"

namespace tritonrt::detail {

/// What the installed Triton answered when asked how it specializes values.
struct SpecializationRules {
  std::string triton_version;
  DType bool_type = DType::u1;
  DType float_type = DType::fp32;
  bool int_one_is_constexpr = true;
  std::int64_t int_divisibility = 16;      ///< a power of two (the bridge checks)
  std::int64_t pointer_divisibility = 16;  ///< a power of two (the bridge checks)
  /// Per DType: the pointer type name, plain and const ("*fp32", "*kfp32").
  std::array<std::array<std::string, 2>, kDTypeCount> pointer_types;
  /// The i1 flags Triton's launcher passes after a descriptor's strides for a kernel that
  /// takes it without TMA: 1 (NaN padding; Triton 3.6), 2 (and round_f32_to_tf32; 3.9).
  int descriptor_flags = 1;
  /// Whether Triton's launcher expands a descriptor inside a tuple (3.9). Triton 3.6's
  /// expands only descriptor parameters: it compiles such a kernel but cannot launch it.
  bool descriptors_in_tuples = false;
  /// How a Gluon descriptor's type names its layout: Gluon's layout class ("" where this
  /// Triton has none, or prints it as tritonrt cannot) and its fields in order, each with the
  /// text of its default where tritonrt does not fill it (nullopt where it does).
  std::string nvmma_layout_class;
  std::vector<std::pair<std::string, std::optional<std::string>>> nvmma_layout_fields;
};

/// A Triton type in one byte: constexpr, a scalar DType, a (const) pointer to one, or a
/// tensor descriptor of one (whose block shape the call's key holds beside the code, as it
/// holds a constexpr's value).
struct TypeCode {
  static constexpr std::uint8_t kConstexpr = 0;
  static constexpr std::uint8_t kScalar = 1;
  static constexpr std::uint8_t kPointer = 64;
  static constexpr std::uint8_t kConstPointer = 128;
  static constexpr std::uint8_t kDescriptor = 192;
  /// A tuple argument: its own code says only that; its elements' codes follow it in the
  /// call's tuple codes (see specialize_tuple), closed by kTupleEnd.
  static constexpr std::uint8_t kTupleEnd = 254;
  static constexpr std::uint8_t kTuple = 255;
  static_assert(kDTypeCount < 63, "each range of codes holds one code per DType");
  static_assert(kDescriptor + kDTypeCount <= kTupleEnd, "descriptor codes stay below the tuple codes");

  static constexpr std::uint8_t scalar(DType t) { return kScalar + static_cast<std::uint8_t>(t); }
  static constexpr std::uint8_t pointer(DType t, bool is_const) {
    return (is_const ? kConstPointer : kPointer) + static_cast<std::uint8_t>(t);
  }
  static constexpr std::uint8_t descriptor(DType t) { return kDescriptor + static_cast<std::uint8_t>(t); }
  static constexpr bool is_pointer(std::uint8_t c) { return c >= kPointer && c < kDescriptor; }
  static constexpr bool is_descriptor(std::uint8_t c) { return c >= kDescriptor && c < kTupleEnd; }
  static constexpr DType dtype(std::uint8_t c) {
    return static_cast<DType>(c >= kDescriptor     ? c - kDescriptor
                              : c >= kConstPointer ? c - kConstPointer
                              : c >= kPointer      ? c - kPointer
                                                   : c - kScalar);
  }
};

/// The specialization of one argument.
struct ParamCode {
  std::uint8_t type;  // trivial, so arrays of codes cost nothing to declare on the hot path
  ParamSpec::Key key;
  friend bool operator==(const ParamCode&, const ParamCode&) = default;
  /// Both bytes as one number: one comparison where it matters.
  std::uint16_t bits() const noexcept { return std::bit_cast<std::uint16_t>(*this); }
};

/// A parameter as the specializer needs it: the static info in compact form, plus what the
/// launch path reads of it for every argument, derived once (see `make`).
struct ParamRule {
  bool is_constexpr = false;
  bool specialize = true;                 ///< not do_not_specialize
  std::optional<std::uint8_t> annotated;  ///< TypeCode of the annotated Triton type

  /// Which path specializes its arguments: typed by value (runtime), a constexpr, or the
  /// rare path (annotated runtime parameters).
  enum class Route : std::uint8_t { runtime, constexpr_value, rare };
  Route route = Route::runtime;
  std::uint8_t pointer_base = 0;  ///< TypeCode of a pointer to DType 0: const or not
  /// The key a specialized integer or address gets, for a divisible and for any other value:
  /// none under do_not_specialize, '' for both under do_not_specialize_on_alignment.
  ParamSpec::Key key_if_divisible = ParamSpec::Key::divisible;
  ParamSpec::Key key_otherwise = ParamSpec::Key::plain;

  static ParamRule make(bool is_constexpr, bool is_const, bool specialize, bool align,
                        std::optional<std::uint8_t> annotated);
};

/// The kernel parameter an error is about.
inline ErrorSite param_site(const KernelSignature& signature, std::size_t index) {
  return {signature.name, signature.params[index].name, static_cast<std::ptrdiff_t>(index)};
}

/// Parses an annotated Triton type ("i64", "*fp16", "*kbf16"); nullopt for others.
std::optional<std::uint8_t> parse_type_code(std::string_view type);
/// Triton's name of a type code ("i32", "*fp16", "constexpr"; "tensordesc<fp16>" for a
/// descriptor, whose full type `descriptor_type` gives).
std::string type_name(const SpecializationRules& rules, std::uint8_t code);
/// Triton's type of a tensor-descriptor argument: "tensordesc<fp16[64, 64]>", and for one
/// with a Gluon layout "tensordesc<fp16[64, 64],NVMMASharedLayout(...)>" as `rules`' Triton
/// prints it (without rules, the layout's fields tritonrt fills; for messages).
std::string descriptor_type(const Arg& descriptor, const SpecializationRules* rules);

/// Fills `out` (one slot per parameter) from the given arguments and the Python defaults;
/// throws ArgumentError on a count mismatch or a missing argument without default.
void bind_arguments(const KernelSignature& signature, std::span<const std::optional<Arg>> defaults,
                    std::span<const Arg> given, Arg* out);

/// The arguments the inline path below does not take: annotated parameters, fixed-type
/// scalars, floats that overflow fp32, and every error, each by its kind (common/kinds/).
/// Throws ArgumentError naming kernel and parameter.
ParamCode specialize_rare_argument(const SpecializationRules& rules, const ParamRule& param, const Arg& arg,
                                   const KernelSignature& signature, std::size_t index);

/// Where specialize_tuple writes a tuple's codes and, when `params` is set, its runtime
/// elements (as the driver reads them) and converted floats.
struct TupleSink {
  ParamCode* codes = nullptr;
  std::size_t code_count = 0;
  std::size_t code_capacity = 0;
  void** params = nullptr;  ///< nullptr: specialize only
  std::size_t param_count = 0;
  std::size_t param_capacity = 0;
  std::uint64_t* slots = nullptr;
  std::size_t slot_count = 0;  ///< slots hold up to param_capacity values
};

/// Specializes a tuple argument as Triton's binder does: each element as the argument of a
/// plain parameter (a parameter's do_not_specialize reaches none of its tuples' elements), a
/// tuple element in turn. Appends kTuple, the elements' codes depth first, then kTupleEnd.
/// Only None and the integer 1 specialize to constexpr elements, and their codes key them
/// (Key::none, Key::one), so the codes are the tuple's part of the call's key but for its
/// descriptors' block shapes (hash_tuple_descriptors). A descriptor element's runtime value is
/// the descriptor, which the launch expands. Throws ArgumentError naming the parameter and
/// the element.
void specialize_tuple(const SpecializationRules& rules, const Arg& tuple, const KernelSignature& signature,
                      std::size_t index, TupleSink& sink);
/// The entry of Triton's specialization list for a tuple argument: `type` its tuple of types
/// as Python prints it, `elements` each element's entry.
ParamSpec tuple_spec(const SpecializationRules& rules, const Arg& tuple, const KernelSignature& signature,
                     std::size_t index);

/// The numbers of the rules that every argument reads. Callers keep a local copy: held in
/// registers, they are not reloaded after each store of a code or parameter byte.
struct HotRules {
  DType bool_type;
  DType float_type;
  bool int_one_is_constexpr;
  std::uint64_t int_mask;  ///< divisibility - 1 (a power of two, checked by the bridge)
  std::uint64_t pointer_mask;

  explicit HotRules(const SpecializationRules& r)
      : bool_type(r.bool_type),
        float_type(r.float_type),
        int_one_is_constexpr(r.int_one_is_constexpr),
        int_mask(static_cast<std::uint64_t>(r.int_divisibility - 1)),
        pointer_mask(static_cast<std::uint64_t>(r.pointer_divisibility - 1)) {}
};

/// Triton's key for a specialized integer or address: 'D' when divisible, else '', by the
/// parameter's policy (a select, no branch). A mask tests divisibility by a power of two
/// (two's complement keeps it right for negatives).
[[gnu::always_inline]] inline ParamSpec::Key divisibility_key(const ParamRule& p, std::uint64_t bits,
                                                              std::uint64_t mask) {
  return (bits & mask) == 0 ? p.key_if_divisible : p.key_otherwise;
}

/// Where the driver reads a runtime argument's bytes, for the rare kinds (out of line).
void* rare_param_bytes(std::uint64_t& slot, std::uint8_t code, const Arg& a);

/// Triton's (type, key) for one argument; throws ArgumentError naming kernel and parameter.
/// Forced inline: it runs for every argument of every launch. With `Pack`, it also says
/// where the driver reads a runtime argument's bytes (`*param`): in place for addresses and
/// integers (their low bytes, little-endian), converted into `*slot` for floats.
template <bool Pack = false>
[[gnu::always_inline]] inline ParamCode specialize_argument(const SpecializationRules& rules, const HotRules& hot,
                                                            const ParamRule& p, const Arg& a,
                                                            const KernelSignature& signature, std::size_t index,
                                                            void** param = nullptr, std::uint64_t* slot = nullptr) {
  void* const in_place = const_cast<void*>(static_cast<const void*>(&a.value));
  if (p.route == ParamRule::Route::runtime) [[likely]] {
    // Tests, not a switch: a call's kinds repeat call after call, and conditional branches
    // follow such a pattern better than one indirect jump per argument.
    const ArgKind kind = a.kind;
    if (kind == ArgKind::pointer) {
      if constexpr (Pack) *param = in_place;
      return {static_cast<std::uint8_t>(p.pointer_base + static_cast<std::uint8_t>(a.dtype)),
              divisibility_key(p, a.value.u, hot.pointer_mask)};
    }
    if (kind == ArgKind::sint || kind == ArgKind::uint) {
      if (a.value.u == 1 && p.specialize && hot.int_one_is_constexpr)
        return {TypeCode::kConstexpr, ParamSpec::Key::none};
      if constexpr (Pack) *param = in_place;
      const DType type = kind == ArgKind::sint
                             ? (a.value.i >= INT32_MIN && a.value.i <= INT32_MAX ? DType::i32 : DType::i64)
                             : (a.value.u <= INT32_MAX   ? DType::i32
                                : a.value.u <= INT64_MAX ? DType::i64
                                                         : DType::u64);
      return {TypeCode::scalar(type), divisibility_key(p, a.value.u, hot.int_mask)};
    }
    if (kind == ArgKind::real) {
      if (hot.float_type == DType::fp32 && std::fabs(a.value.f) <= std::numeric_limits<float>::max()) [[likely]] {
        if constexpr (Pack) {
          const float f = static_cast<float>(a.value.f);
          std::uint32_t bits;
          std::memcpy(&bits, &f, sizeof bits);
          *slot = bits;
          *param = slot;
        }
        return {TypeCode::scalar(DType::fp32), ParamSpec::Key::none};
      }
    } else if (kind == ArgKind::boolean) {
      if constexpr (Pack) *param = in_place;
      return {TypeCode::scalar(hot.bool_type), ParamSpec::Key::none};
    } else if (kind == ArgKind::none) {
      return {TypeCode::kConstexpr, ParamSpec::Key::none};
    }
  } else if (p.route == ParamRule::Route::constexpr_value) {
    if (a.kind != ArgKind::pointer && a.kind != ArgKind::typed && a.kind != ArgKind::descriptor &&
        a.kind != ArgKind::tuple) [[likely]] {
      return {TypeCode::kConstexpr, ParamSpec::Key::none};
    }
  }
  const ParamCode code = specialize_rare_argument(rules, p, a, signature, index);
  if constexpr (Pack) {
    if (code.type != TypeCode::kConstexpr) *param = rare_param_bytes(*slot, code.type, a);
  }
  return code;
}

/// str(x.dtype) in Python for a pointer argument from `source`: "torch.float16" for a tensor,
/// the triton.language type's "fp16" for an address (Triton's tuning keys hold these).
std::string dtype_text(DType type, ArgSource source);

/// repr() of a constexpr value as Python prints it (its kind's, common/kinds/).
std::string python_repr(const Arg& value, const ParamInfo& param);

/// The readable name of an argument kind, for error messages ("a device pointer"; its kind's).
std::string describe(const Arg& arg);

/// An entry's key in Triton's specialization list as Python prints it (a constexpr's: its value).
std::string key_repr(const ParamSpec& entry);

}  // namespace tritonrt::detail

// How a call's key is hashed and compared, on every launch: its codes folded a word at a
// time, its constexpr values (strings by content), its options. The launch path's kernel
// table and the decorators' memos (a tuning key) share it.
#pragma once

#include <cstdint>

#include "common/compile_options.h"
#include "common/specialization.h"
#include "tritonrt/arg.h"

namespace tritonrt::detail {

inline constexpr std::uint64_t kHashSeed = 0xcbf29ce484222325ULL;
inline std::uint64_t hash_mix(std::uint64_t h, std::uint64_t v) noexcept { return (h ^ v) * 0x100000001b3ULL; }

/// same_constexpr for the kinds other than bool and integers.
bool same_other_constexpr(const Arg& a, const Arg& b) noexcept;
/// Whether two constexpr arguments are the same value (strings by content, tuples by their
/// elements; descriptors by what their type holds). Bools and integers, most constexprs and
/// tuning keys, are compared inline.
[[gnu::always_inline]] inline bool same_constexpr(const Arg& a, const Arg& b) noexcept {
  if (a.kind != b.kind) return false;
  if (a.kind == ArgKind::sint || a.kind == ArgKind::uint || a.kind == ArgKind::boolean) return a.value.u == b.value.u;
  return same_other_constexpr(a, b);
}
/// Whether two tensor descriptors have the same element type and block shape: the part of
/// the call's key their type code does not hold.
bool same_descriptor_key(const Arg& a, const Arg& b) noexcept;
/// Whether a tuple holds a tensor descriptor, at any depth.
bool holds_descriptor(const Arg& tuple) noexcept;
/// Whether two tuples of the same codes hold descriptors of the same key, element for element
/// (their other elements are keyed by their codes alone).
bool same_tuple_descriptors(const Arg& a, const Arg& b) noexcept;
/// Folds the keys of a tuple's descriptors (depth first) into `h`; none for a tuple without.
std::uint64_t hash_tuple_descriptors(std::uint64_t h, const Arg& tuple) noexcept;
/// The value bits of a constexpr argument (strings by content, tuples by their elements; a
/// descriptor's block shape).
std::uint64_t constexpr_bits(const Arg& a) noexcept;

/// Folds a constexpr argument's kind and value into `h`.
[[gnu::always_inline]] inline std::uint64_t hash_constexpr(std::uint64_t h, const Arg& arg) noexcept {
  return hash_mix(hash_mix(h, static_cast<std::uint64_t>(arg.kind)), constexpr_bits(arg));
}
/// A code's 16 bits, for hashing.
[[gnu::always_inline]] inline std::uint64_t code_bits(ParamCode code) noexcept {
  return static_cast<std::uint64_t>(code.type) | static_cast<std::uint64_t>(code.key) << 8;
}
/// The key's hash: `codes_hash` (each code's bits folded in from kHashSeed), the
/// constexprs' hash and the options.
[[gnu::always_inline]] inline std::uint64_t hash_key(std::uint64_t codes_hash, std::uint64_t constexprs,
                                                     const OptionsKey& options) noexcept {
  std::uint64_t h = hash_mix(codes_hash, constexprs);
  for (const std::uint64_t w : options.words) h = hash_mix(h, w);
  return h ^ (h >> 29);
}

}  // namespace tritonrt::detail

// One function's kernels loaded in one device context, keyed by specialization. Reads are
// lock-free (a published, immutable open-addressing table, common/published.h); inserts copy
// the table under the function's mutex.
#pragma once

#include <algorithm>
#include <cstring>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/compile_options.h"
#include "common/hashing.h"
#include "common/published.h"
#include "common/specialization.h"
#include "launch/module.h"
#include "tritonrt/tensor_descriptor.h"

namespace tritonrt::detail {

/// Codes are compared a word (four codes) at a time: arrays of them are zero-padded to whole
/// words, and `padded_codes` is such an array's span.
inline constexpr std::size_t kCodesPerWord = 8 / sizeof(ParamCode);
inline std::span<const ParamCode> padded_codes(const ParamCode* codes, std::size_t count) noexcept {
  return {codes, (count + kCodesPerWord - 1) / kCodesPerWord * kCodesPerWord};
}

/// A call's codes: one per parameter (padded to whole words), and its tuples' elements' (the
/// `tuple` codes, specialize_tuple's; empty for a call without tuples).
struct CallCodes {
  std::span<const ParamCode> params;
  std::span<const ParamCode> tuples;
};

/// One specialization's entry: the exact key (to rule out hash collisions) and its kernel.
struct CacheEntry {
  std::uint64_t hash = 0;
  std::vector<ParamCode> codes;  ///< zero-padded to whole words
  std::vector<ParamCode> tuple_codes;
  std::vector<Arg> constexprs;                   ///< per parameter; meaningful for constexpr and descriptor ones
  std::vector<std::uint16_t> constexpr_indices;  ///< and the descriptors' (their block shapes are key)
  std::deque<std::string> strings;               ///< owned copies behind string constexprs (in tuples too)
  std::deque<std::vector<Arg>> tuples;           ///< owned copies of tuples' elements, a vector each
  std::vector<std::optional<TensorDescriptor>> descriptors;  ///< copies behind descriptors (empty: none)
  /// The tuple parameters that hold descriptors (their block shapes are key), whose entries in
  /// `constexprs` are owned copies, with the descriptors inside copied into `element_descriptors`.
  std::vector<std::uint16_t> tuple_key_indices;
  std::deque<TensorDescriptor> element_descriptors;
  OptionsKey options{CompileOptions{}};
  ModuleFunction kernel;

  /// The entry for a call's key; constexpr strings and tuples are copied into the entry.
  CacheEntry(std::uint64_t hash, CallCodes codes, std::span<const Arg> args, const OptionsKey& options,
             ModuleFunction kernel);
  /// Whether a call has exactly this entry's key.
  [[gnu::always_inline]] inline bool matches(CallCodes codes, std::span<const Arg> args,
                                             const OptionsKey& options) const;
  /// Whether a call whose codes are this entry's has the same descriptors in its tuples.
  bool same_tuple_keys(std::span<const Arg> args) const noexcept {
    return std::ranges::all_of(tuple_key_indices,
                               [&](std::uint16_t t) { return same_tuple_descriptors(args[t], constexprs[t]); });
  }
};

class KernelTable {
 public:
  const CacheEntry* find(std::uint64_t hash, CallCodes codes, std::span<const Arg> args,
                         const OptionsKey& options) const noexcept;
  /// Publishes a table holding every entry plus `added` (the caller serializes inserts).
  const CacheEntry& insert(std::unique_ptr<CacheEntry> added);

 private:
  struct Slots {
    std::vector<const CacheEntry*> slots;  ///< power of two, at most half full
  };
  Published<Slots> table_;
  std::vector<std::unique_ptr<CacheEntry>> entries_;
};

inline bool CacheEntry::matches(CallCodes call, std::span<const Arg> args, const OptionsKey& call_options) const {
  static_assert(sizeof(ParamCode) == 2 && std::is_trivially_copyable_v<ParamCode>);
  const std::span<const ParamCode> call_codes = call.params;
  if (call_codes.size() != codes.size() || !(call_options == options)) return false;
  // Whole words (a call to memcmp costs more for these few bytes).
  const auto* a = reinterpret_cast<const unsigned char*>(call_codes.data());
  const auto* b = reinterpret_cast<const unsigned char*>(codes.data());
  for (std::size_t i = 0; i < codes.size() * sizeof(ParamCode); i += 8) {
    std::uint64_t x, y;
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    if (x != y) return false;
  }
  // Tuples last: rare, and their descriptors are compared element by element.
  if (!call.tuples.empty() || !tuple_codes.empty()) [[unlikely]] {
    if (!std::ranges::equal(call.tuples, tuple_codes) || !same_tuple_keys(args)) return false;
  }
  for (const std::uint16_t c : constexpr_indices) {
    if (!same_constexpr(args[c], constexprs[c])) return false;
  }
  return true;
}

}  // namespace tritonrt::detail

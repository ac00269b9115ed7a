// One function's kernels loaded in one device context, keyed by specialization. Reads are
// lock-free (an atomically published, immutable open-addressing table); inserts copy the
// table under the function's mutex and keep old tables alive until the table dies.
#pragma once

#include <atomic>
#include <cstring>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/compile_options.h"
#include "common/specialization.h"
#include "launch/module.h"

namespace tritonrt::detail {

/// Codes are compared a word (four codes) at a time: arrays of them are zero-padded to whole
/// words, and `padded_codes` is such an array's span.
inline constexpr std::size_t kCodesPerWord = 8 / sizeof(ParamCode);
inline std::span<const ParamCode> padded_codes(const ParamCode* codes, std::size_t count) noexcept {
  return {codes, (count + kCodesPerWord - 1) / kCodesPerWord * kCodesPerWord};
}

/// One specialization's entry: the exact key (to rule out hash collisions) and its kernel.
struct CacheEntry {
  std::uint64_t hash = 0;
  std::vector<ParamCode> codes;  ///< zero-padded to whole words
  std::vector<Arg> constexprs;   ///< per parameter; meaningful for constexpr ones
  std::vector<std::uint16_t> constexpr_indices;
  std::vector<std::string> strings;  ///< owned copies behind string constexprs
  OptionsKey options{CompileOptions{}};
  LoadedFunction kernel;

  /// The entry for a call's key (`codes` padded); string constexprs are copied into the entry.
  CacheEntry(std::uint64_t hash, std::span<const ParamCode> codes, std::span<const Arg> args, const OptionsKey& options,
             LoadedFunction kernel);
  /// Whether a call (codes padded) has exactly this entry's key.
  [[gnu::always_inline]] inline bool matches(std::span<const ParamCode> codes, std::span<const Arg> args,
                                             const OptionsKey& options) const;
};

class KernelTable {
 public:
  const CacheEntry* find(std::uint64_t hash, std::span<const ParamCode> codes, std::span<const Arg> args,
                         const OptionsKey& options) const noexcept;
  /// Publishes a table holding every entry plus `added` (the caller serializes inserts).
  const CacheEntry& insert(std::unique_ptr<CacheEntry> added);

 private:
  struct Slots {
    std::vector<const CacheEntry*> slots;  ///< power of two, at most half full
  };
  std::atomic<const Slots*> current_{nullptr};
  std::vector<std::unique_ptr<CacheEntry>> entries_;
  std::vector<std::unique_ptr<const Slots>> tables_;  ///< readers may hold any of them
};

/// Hash folding, one word at a time, for a call's specialization key.
inline constexpr std::uint64_t kHashSeed = 0xcbf29ce484222325ULL;
inline std::uint64_t hash_mix(std::uint64_t h, std::uint64_t v) noexcept { return (h ^ v) * 0x100000001b3ULL; }
/// Whether two constexpr arguments are the same value (strings by content).
bool same_constexpr(const Arg& a, const Arg& b) noexcept;
/// The value bits of a constexpr argument (strings by content).
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

inline bool CacheEntry::matches(std::span<const ParamCode> call_codes, std::span<const Arg> args,
                                const OptionsKey& call_options) const {
  static_assert(sizeof(ParamCode) == 2 && std::is_trivially_copyable_v<ParamCode>);
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
  for (const std::uint16_t c : constexpr_indices) {
    if (!same_constexpr(args[c], constexprs[c])) return false;
  }
  return true;
}

}  // namespace tritonrt::detail

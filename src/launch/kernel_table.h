// One function's kernels loaded in one device context, keyed by specialization. Reads are
// lock-free (an atomically published, immutable open-addressing table); inserts copy the
// table under the function's mutex and keep old tables alive until the table dies.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/compile_options.h"
#include "common/specialization.h"
#include "launch/module.h"

namespace tritonrt::detail {

/// One specialization's entry: the exact key (to rule out hash collisions) and its kernel.
struct CacheEntry {
  std::uint64_t hash = 0;
  std::vector<ParamCode> codes;
  std::vector<Arg> constexprs;  ///< per parameter; meaningful for constexpr ones
  std::vector<std::uint16_t> constexpr_indices;
  std::vector<std::string> strings;  ///< owned copies behind string constexprs
  OptionsKey options{CompileOptions{}};
  LoadedFunction kernel;

  /// The entry for a call's key; string constexprs are copied into the entry.
  CacheEntry(std::uint64_t hash, std::span<const ParamCode> codes, std::span<const Arg> args, const OptionsKey& options,
             LoadedFunction kernel);
  bool matches(std::span<const ParamCode> codes, std::span<const Arg> args, const OptionsKey& options) const;
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
/// The value bits of a constexpr argument (strings by content).
std::uint64_t constexpr_bits(const Arg& a) noexcept;
/// Folds one parameter's code (and a constexpr's value) into `h`.
[[gnu::always_inline]] inline std::uint64_t hash_param(std::uint64_t h, ParamCode code, const Arg& arg) noexcept {
  h = hash_mix(h, (static_cast<std::uint64_t>(code.type) << 8) | static_cast<std::uint64_t>(code.key));
  if (code.type != TypeCode::kConstexpr) [[likely]] return h;
  return hash_mix(hash_mix(h, static_cast<std::uint64_t>(arg.kind)), constexpr_bits(arg));
}
/// Folds the options in and finishes the hash.
[[gnu::always_inline]] inline std::uint64_t hash_finish(std::uint64_t h, const OptionsKey& options) noexcept {
  for (const std::uint64_t w : options.words) h = hash_mix(h, w);
  return h ^ (h >> 29);
}

}  // namespace tritonrt::detail

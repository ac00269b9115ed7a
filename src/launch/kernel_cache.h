// The launch path's cache: per device context, specialization -> loaded kernel. Reads are
// lock-free (an atomically published, immutable open-addressing table); inserts copy the
// table under the function's launch mutex and keep old tables alive until the function dies.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "function/specializer.h"
#include "tritonrt/artifact.h"
#include "tritonrt/options.h"

namespace tritonrt::detail {

/// A module loaded in one context; unloaded when the owner goes away (errors ignored).
struct ModuleHandle {
  CUmodule module = nullptr;
  ModuleHandle() = default;
  explicit ModuleHandle(CUmodule m) : module(m) {}
  ModuleHandle(const ModuleHandle&) = delete;
  ModuleHandle& operator=(const ModuleHandle&) = delete;
  ~ModuleHandle();
};

/// What a launch needs, read once from the artifact and the loaded function.
struct LoadedFunction {
  CUfunction function = nullptr;
  unsigned block_x = 0;
  unsigned shared = 0;
  int num_ctas = 1;
  bool launch_pdl = false;
  bool launch_cooperative_grid = false;
  std::int64_t global_scratch_size = 0;
  std::int64_t global_scratch_align = 1;
  std::int64_t profile_scratch_size = 0;
  std::int64_t profile_scratch_align = 1;
  std::shared_ptr<const Artifact> artifact;
  std::unique_ptr<ModuleHandle> module;
};

/// CompileOptions packed exactly into three words: compared on every cache hit.
struct OptionsKey {
  std::uint64_t words[3];

  [[gnu::always_inline]] explicit OptionsKey(const CompileOptions& o) noexcept {
    auto value = [](const std::optional<int>& v) { return static_cast<std::uint64_t>(static_cast<std::uint32_t>(v.value_or(0))); };
    auto flag = [](const std::optional<bool>& v, int shift) {
      return static_cast<std::uint64_t>(v.has_value() ? 2 | static_cast<int>(*v) : 0) << shift;
    };
    words[0] = value(o.num_warps) | value(o.num_stages) << 32;
    words[1] = value(o.num_ctas) | value(o.maxnreg) << 32;
    words[2] = static_cast<std::uint64_t>(o.num_warps.has_value()) | o.num_stages.has_value() << 1 |
               o.num_ctas.has_value() << 2 | o.maxnreg.has_value() << 3 | flag(o.enable_fp_fusion, 4) |
               flag(o.launch_pdl, 6) | flag(o.launch_cooperative_grid, 8) | flag(o.debug, 10);
  }
  friend bool operator==(const OptionsKey&, const OptionsKey&) = default;
};

/// One specialization's entry: the exact key (to rule out hash collisions) and its kernel.
struct CacheEntry {
  std::uint64_t hash = 0;
  std::vector<ParamCode> codes;
  std::vector<Arg> constexprs;  ///< per parameter; meaningful for constexpr ones
  std::vector<std::uint16_t> constexpr_indices;
  std::vector<std::string> strings;  ///< owned copies behind string constexprs
  OptionsKey options{CompileOptions{}};
  LoadedFunction kernel;

  bool matches(std::span<const ParamCode> codes, std::span<const Arg> args, const OptionsKey& options) const;
};

struct CacheTable {
  std::vector<const CacheEntry*> slots;  ///< power of two, at most half full
};

/// One device context: its device, its limits, and its kernel table.
struct DeviceContext {
  CUcontext context = nullptr;
  CUdevice device = 0;
  Target target;
  int max_grid[3] = {0, 0, 0};
  int max_shared_optin = 0;
  std::atomic<const CacheTable*> table{nullptr};
  std::vector<std::unique_ptr<CacheEntry>> entries;
  std::vector<std::unique_ptr<const CacheTable>> tables;
  DeviceContext* next = nullptr;

  const CacheEntry* find(std::uint64_t hash, std::span<const ParamCode> codes, std::span<const Arg> args,
                         const OptionsKey& options) const noexcept;
  /// Publishes a table holding every entry plus `added` (caller holds the launch mutex).
  void insert(std::unique_ptr<CacheEntry> added);
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

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
  /// Runtime (non-constexpr) parameters in kernel order, by argument index.
  std::vector<std::uint16_t> runtime_params;
  std::shared_ptr<const Artifact> artifact;
  std::unique_ptr<ModuleHandle> module;
};

/// One specialization's entry: the exact key (to rule out hash collisions) and its kernel.
struct CacheEntry {
  std::uint64_t hash = 0;
  std::vector<ParamCode> codes;
  std::vector<Arg> constexprs;  ///< per parameter; meaningful for constexpr ones
  std::vector<std::uint16_t> constexpr_indices;
  std::vector<std::string> strings;  ///< owned copies behind string constexprs
  CompileOptions options;
  LoadedFunction kernel;

  bool matches(std::span<const ParamCode> codes, std::span<const Arg> args, const CompileOptions& options) const;
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
                         const CompileOptions& options) const noexcept;
  /// Publishes a table holding every entry plus `added` (caller holds the launch mutex).
  void insert(std::unique_ptr<CacheEntry> added);
};

/// Hash folding, one word at a time, for a call's specialization key.
inline constexpr std::uint64_t kHashSeed = 0xcbf29ce484222325ULL;
inline std::uint64_t hash_mix(std::uint64_t h, std::uint64_t v) noexcept { return (h ^ v) * 0x100000001b3ULL; }
/// Folds one parameter's code (and a constexpr's value) into `h`.
std::uint64_t hash_param(std::uint64_t h, ParamCode code, const Arg& arg) noexcept;
/// Folds the options in and finishes the hash.
std::uint64_t hash_finish(std::uint64_t h, const CompileOptions& options) noexcept;

}  // namespace tritonrt::detail

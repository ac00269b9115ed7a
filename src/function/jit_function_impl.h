// JitFunction's private state, shared by the compile path (jit_function.cpp) and the
// launch path (launch/launcher.cpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <future>
#include <map>
#include <mutex>
#include <string>

#include "compiler/compiler.h"
#include "launch/kernel_cache.h"
#include "tritonrt/jit_function.h"

namespace tritonrt {

inline constexpr std::size_t kMaxParams = 256;

/// One call on the launch path, resolved; storage for defaults is left uninitialized
/// (Arg and ParamCode are trivially copyable) so the hot path writes only what it uses.
struct ResolvedCall {
  alignas(Arg) std::byte storage_bytes[sizeof(Arg) * kMaxParams];
  detail::ParamCode codes[kMaxParams];
  std::uint64_t slots[kMaxParams + 2];  ///< kernel-parameter bytes, by argument index
  void* kernel_params[kMaxParams + 2];   ///< what cuLaunchKernel reads: runtime args, scratch
  std::size_t kernel_param_count;
  std::span<const Arg> args;
  std::uint64_t hash;

  Arg* storage() { return reinterpret_cast<Arg*>(storage_bytes); }
};

struct JitFunction::Impl {
  detail::LoadedKernel kernel;
  const detail::SpecializationRules* rules = nullptr;
  std::size_t param_count = 0;

  std::mutex compile_mutex;
  // Compile cache: one entry per (target, options, specialization); concurrent first
  // calls with the same key wait for the one compilation.
  std::map<std::string, std::shared_future<std::shared_ptr<const Artifact>>> compiled;

  // Launch path: one kernel table per device context, found without a lock.
  std::mutex launch_mutex;
  std::atomic<detail::DeviceContext*> contexts{nullptr};
  std::vector<std::unique_ptr<detail::DeviceContext>> owned_contexts;

  /// This function's table for a device context (a CUcontext), if it has one yet; lock-free.
  detail::DeviceContext* find_context(void* ctx) const noexcept;
  /// The cache entry (kernel loaded in the launch's context) for a call, creating it on a miss.
  const detail::CacheEntry& resolve(JitFunction& fn, const LaunchConfig& config, ResolvedCall& call,
                                    std::span<const Arg> given, detail::DeviceContext*& context);

  ~Impl();
};

}  // namespace tritonrt

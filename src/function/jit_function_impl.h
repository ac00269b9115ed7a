// JitFunction's private state and the launch path's per-call storage, shared by the
// compile path (jit_function.cpp) and the launch path (launch.cpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstring>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "common/compile_options.h"
#include "compiler/compiler.h"
#include "launch/context.h"
#include "launch/kernel_table.h"
#include "launch/params.h"
#include "tritonrt/jit_function.h"

namespace tritonrt::detail {

inline constexpr std::size_t kMaxParams = 256;

/// One function's kernels in one device context, in a lock-free list per function.
struct ContextKernels {
  DeviceContext device;
  KernelTable table;
  ContextKernels* next = nullptr;
};

/// One launch's working storage, on the stack. Nothing is initialized up front (Arg and
/// ParamCode are trivially copyable): the hot path writes only what the call uses.
struct CallFrame {
  alignas(Arg) std::byte bound_storage[sizeof(Arg) * kMaxParams];  ///< arguments with defaults applied
  alignas(8) ParamCode codes[kMaxParams + 3];  ///< zero-padded to whole 8-byte words (see padded_codes)
  std::uint64_t slots[kMaxParams];      ///< converted floating-point arguments, by argument index
  void* kernel_params[kMaxParams + 2];  ///< what cuLaunchKernel reads: runtime args, then scratch
                                        ///< (pointing into `args` and `slots`, both live until it returns)
  std::size_t kernel_param_count;
  std::span<const Arg> args;  ///< the call's arguments, defaults applied
  std::uint64_t hash;
  ContextKernels* context;

  Arg* bound() { return reinterpret_cast<Arg*>(bound_storage); }
};

}  // namespace tritonrt::detail

namespace tritonrt {

struct JitFunction::Impl {
  detail::LoadedKernel kernel;
  const detail::SpecializationRules* triton_rules = nullptr;
  std::size_t param_count = 0;

  // Compile cache: one entry per (target, options, specialization); concurrent first
  // calls with the same key wait for the one compilation.
  std::mutex compile_mutex;
  std::map<std::string, std::shared_future<std::shared_ptr<const Artifact>>> compiled;

  // Launch path: one kernel table per device context, found without a lock.
  std::mutex launch_mutex;
  std::atomic<detail::ContextKernels*> contexts{nullptr};
  std::vector<std::unique_ptr<detail::ContextKernels>> owned_contexts;

  /// Binds defaults, specializes every argument, hashes the key and writes the kernel
  /// parameters into `call` in one pass: the first half of every launch.
  [[gnu::always_inline]] inline void prepare(const KernelSignature& sig, std::span<const Arg> given,
                                             const detail::OptionsKey& options, detail::CallFrame& call) const;

  /// The entry for a prepared call in `ctx`, or nullptr; lock-free.
  [[gnu::always_inline]] inline const detail::CacheEntry* find(CUcontext ctx, const detail::OptionsKey& options,
                                                               detail::CallFrame& call) const noexcept;

  /// The miss path: compiles (or finds) the call's artifact, loads it into `ctx` and
  /// publishes the entry; once per key, however many threads miss together.
  [[gnu::cold]] const detail::CacheEntry& load(JitFunction& fn, const LaunchConfig& config, CUcontext ctx,
                                               const detail::OptionsKey& options, detail::CallFrame& call);
};

void JitFunction::Impl::prepare(const KernelSignature& sig, std::span<const Arg> given,
                                const detail::OptionsKey& options, detail::CallFrame& call) const {
  using namespace detail;
  const std::size_t n = param_count;
  call.args = given;
  if (given.size() != n) [[unlikely]] {
    bind_arguments(sig, kernel.defaults, given, call.bound());
    call.args = std::span<const Arg>(call.bound(), n);
  }
  // Locals, not members: the stores below cannot make the compiler reload them.
  const SpecializationRules& rules = *triton_rules;
  const HotRules hot(rules);
  const ParamRule* params = kernel.param_rules.data();
  const Arg* args = call.args.data();
  std::uint64_t hash = kHashSeed;
  std::uint64_t constexpr_hash = kHashSeed;
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const ParamCode code = specialize_argument(rules, hot, params[i], args[i], sig, i);
    call.codes[i] = code;
    hash = hash_mix(hash, code_bits(code));
    // The kernel takes the runtime (non-constexpr) arguments in order; a cache hit has the
    // same codes, so this list is the compiled kernel's parameter list.
    if (code.type != TypeCode::kConstexpr) [[likely]] {
      call.kernel_params[count++] = param_bytes(call.slots[i], code.type, args[i]);
    } else {
      constexpr_hash = hash_constexpr(constexpr_hash, args[i]);
    }
  }
  for (std::size_t i = n; i % kCodesPerWord != 0; ++i) call.codes[i] = ParamCode{};  // whole words
  call.kernel_param_count = count;
  call.hash = hash_key(hash, constexpr_hash, options);
}

const detail::CacheEntry* JitFunction::Impl::find(CUcontext ctx, const detail::OptionsKey& options,
                                                  detail::CallFrame& call) const noexcept {
  detail::ContextKernels* c = contexts.load(std::memory_order_acquire);
  while (c != nullptr && c->device.context != ctx) c = c->next;
  call.context = c;
  if (c == nullptr) return nullptr;
  return c->table.find(call.hash, detail::padded_codes(call.codes, param_count), call.args, options);
}

}  // namespace tritonrt

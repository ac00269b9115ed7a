// JitFunction's private state and the launch path's per-call storage, shared by the
// compile path (jit_function.cpp) and the launch path (hit_path.cpp).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "common/compile_options.h"
#include "compiler/compiler.h"
#include "function/autotune.h"
#include "function/decorators.h"
#include "function/param_names.h"
#include "launch/context.h"
#include "launch/kernel_table.h"
#include "launch/launcher.h"
#include "tritonrt/jit_function.h"

namespace tritonrt::detail {

/// One function's kernels in one device context, in a published list per function, with
/// what its decorators remember there (heuristics can read the device).
struct ContextKernels {
  DeviceContext device;
  KernelTable table;
  /// The entry the last hit here found: a call with the same key checks its codes against
  /// it as it makes them, with no hash and no table probe.
  std::atomic<const CacheEntry*> last{nullptr};
  std::unique_ptr<DecoratorState> decorators;  ///< for a decorated kernel
};

static_assert(kMaxParams <= kMaxKernelParams, "the launcher takes every runtime argument a call can have");

/// One launch's working storage, on the stack. Nothing is initialized up front (Arg and
/// ParamCode are trivially copyable): the hot path writes only what the call uses.
struct CallFrame {
  alignas(Arg) std::byte bound_storage[sizeof(Arg) * kMaxParams];  ///< arguments with defaults applied
  alignas(8) ParamCode codes[kMaxParams + 3];  ///< zero-padded to whole 8-byte words (see padded_codes)
  std::uint64_t slots[kMaxParams];             ///< converted floating-point arguments, by argument index
  void* kernel_params[kMaxParams + 2];         ///< what cuLaunchKernel reads: runtime args, then scratch
                                               ///< (pointing into `args` and `slots`, both live until it returns)
  std::size_t kernel_param_count;
  std::span<const Arg> args;  ///< the call's arguments, defaults applied
  std::uint64_t hash;
  ContextKernels* context;
  // A call with tuples: their elements' codes (specialize_tuple), and their converted
  // floats, by the runtime position of the element.
  static constexpr std::size_t kMaxTupleCodes = 2 * kMaxParams;
  ParamCode tuple_codes[kMaxTupleCodes];
  std::size_t tuple_code_count;
  std::uint64_t tuple_slots[kMaxParams];

  Arg* bound() { return reinterpret_cast<Arg*>(bound_storage); }
  /// The call's codes, with `params` codes padded to whole words.
  CallCodes codes_of(std::size_t params) const noexcept {
    return {padded_codes(codes, params), std::span<const ParamCode>(tuple_codes, tuple_code_count)};
  }
};

}  // namespace tritonrt::detail

namespace tritonrt {

// Hidden: the public header only names it, and libtritonrt exports its public API only.
struct [[gnu::visibility("hidden")]] JitFunction::Impl final : detail::TrialMaker {
  detail::KernelDescription kernel;
  const detail::SpecializationRules* triton_rules = nullptr;
  std::size_t param_count = 0;
  detail::ParamNames names;  ///< kernel.signature's, for the BoundArgs of grid functions

  // Compile cache: one entry per (target, options, specialization); concurrent first
  // calls with the same key wait for the one compilation.
  std::mutex compile_mutex;
  std::map<std::string, std::shared_future<std::shared_ptr<const Artifact>>> compiled;

  // Launch path: one kernel table per device context, found without a lock.
  std::mutex launch_mutex;
  detail::PublishedList<detail::ContextKernels> contexts;

  // Decorators (decorators.cpp): C++ heuristics set in place of Python ones (one slot per
  // heuristic, over all layers in order), and the memory of calls for explicit targets.
  std::vector<detail::CppHeuristic> cpp_heuristics;
  detail::CppConfigHook cpp_config_hook;  ///< in place of the autotune configs' pre_hooks, when set
  /// Whether any is set (they run on every call: no call is resolved from a remembered one).
  bool cpp_decorators = false;
  void note_cpp_decorators() {
    cpp_decorators = static_cast<bool>(cpp_config_hook) ||
                     std::any_of(cpp_heuristics.begin(), cpp_heuristics.end(), [](const auto& h) { return bool(h); });
  }
  std::unique_ptr<detail::DecoratorState> host_decorators;

  /// Resolves a decorated call: the caller's arguments bound, then the decorators applied
  /// outermost first (heuristics, tuned configs), then defaults for what none set.
  void resolve(std::span<const Arg> given, detail::Resolution & r);
  /// Throws ArgumentError unless the kernel is autotuned and every autotuner has config `config`.
  void check_chosen_config(std::ptrdiff_t config) const;
  /// Applies decorator layers [first, last) to `r`.
  void apply_layers(std::size_t first, std::size_t last, detail::Resolution & r);
  /// Autotune configs' trials (autotune.h), made through this function's prepare, find and miss
  /// path, the compiles they need run at once (function/concurrent_compiles.h).
  struct Candidate;
  std::vector<detail::MadeTrial> trials(std::size_t layer, std::span<const std::size_t> configs,
                                        const detail::Resolution& r) override;

  /// Triton's specialization of a call whose every argument is bound (no decorators).
  Specialization specialize(const KernelSignature& sig, std::span<const Arg> args) const;
  /// The specialization a call's codes stand for (`bound`: its arguments, defaults applied;
  /// `codes`: one per parameter, as prepare or specialize made them), as Triton prints it.
  Specialization specialization_of(const KernelSignature& sig, std::span<const Arg> bound,
                                   const detail::ParamCode* codes) const;
  /// Compiles (or finds in the in-memory cache) a call whose every argument is bound.
  std::shared_ptr<const Artifact> compile(const KernelSignature& sig, const Target& target,
                                          const CompileOptions& options, std::span<const Arg> args);
  /// The same for a call already specialized (the miss path, after prepare): `bound` holds its
  /// arguments with defaults applied.
  std::shared_ptr<const Artifact> compile_specialized(const Target& target, const CompileOptions& options,
                                                      std::span<const Arg> bound, Specialization spec);

  /// The general path of a launch: prepare, find in the context's table, load on a miss;
  /// remembers the entry as the context's last.
  [[gnu::cold]] const detail::CacheEntry* find_or_load(const CompileOptions& options, CUcontext ctx,
                                                       const detail::OptionsKey& key, std::span<const Arg> given,
                                                       detail::CallFrame& call);

  /// This function's kernels in `ctx`, or nullptr before its first launch there; lock-free.
  [[gnu::always_inline]] inline detail::ContextKernels* context_of(CUcontext ctx) const noexcept {
    for (detail::ContextKernels* c : contexts.entries()) {
      if (c->device.context == ctx) return c;
    }
    return nullptr;
  }

  /// This function's kernels in `ctx`, described on first use.
  detail::ContextKernels& context_for(CUcontext ctx);

  /// Binds defaults, specializes every argument, hashes the key and writes the kernel
  /// parameters into `call` in one pass: the first half of every launch.
  [[gnu::always_inline]] inline void prepare(const KernelSignature& sig, std::span<const Arg> given,
                                             const detail::OptionsKey& options, detail::CallFrame& call) const;

  /// Specializes and packs the call as `prepare` does, checking each code against `expected`
  /// as it is made instead of hashing: true when the call has `expected`'s key.
  [[gnu::always_inline]] inline bool matches(const KernelSignature& sig, std::span<const Arg> given,
                                             const detail::OptionsKey& options, const detail::CacheEntry& expected,
                                             detail::CallFrame& call) const;

  /// Specializes tuple argument `index` into `call`'s tuple codes and packs its runtime
  /// elements from position `count` on; returns the position after them.
  [[gnu::cold]] std::size_t pack_tuple(const KernelSignature& sig, const Arg& tuple, std::size_t index,
                                       std::size_t count, detail::CallFrame& call) const;

  /// The entry for a prepared call in `ctx`, or nullptr; lock-free.
  [[gnu::always_inline]] inline const detail::CacheEntry* find(CUcontext ctx, const detail::OptionsKey& options,
                                                               detail::CallFrame& call) const noexcept;

  /// The miss path: compiles (or finds) the call's artifact, loads it into `ctx` and
  /// publishes the entry; once per key, however many threads miss together.
  [[gnu::cold]] const detail::CacheEntry& miss(const CompileOptions& options, CUcontext ctx,
                                               const detail::OptionsKey& key, detail::CallFrame& call);
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
  call.tuple_code_count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    void* param = nullptr;
    const ParamCode code = specialize_argument<true>(rules, hot, params[i], args[i], sig, i, &param, &call.slots[i]);
    call.codes[i] = code;
    hash = hash_mix(hash, code_bits(code));
    // The kernel takes the runtime (non-constexpr) arguments in order; a cache hit has the
    // same codes, so this list is the compiled kernel's parameter list.
    if (code.type != TypeCode::kConstexpr) [[likely]] {
      if (code.type >= TypeCode::kDescriptor) [[unlikely]] {
        if (code.type == TypeCode::kTuple) {
          count = pack_tuple(sig, args[i], i, count, call);  // Triton passes its runtime elements in order
          constexpr_hash = hash_tuple_descriptors(constexpr_hash, args[i]);  // their block shapes are key
          continue;
        }
        constexpr_hash = hash_constexpr(constexpr_hash, args[i]);  // a descriptor's block shape is key
      }
      call.kernel_params[count++] = param;
    } else {
      constexpr_hash = hash_constexpr(constexpr_hash, args[i]);
    }
  }
  for (std::size_t t = 0; t < call.tuple_code_count; ++t) hash = hash_mix(hash, code_bits(call.tuple_codes[t]));
  for (std::size_t i = n; i % kCodesPerWord != 0; ++i) call.codes[i] = ParamCode{};  // whole words
  call.kernel_param_count = count;
  call.hash = hash_key(hash, constexpr_hash, options);
}

bool JitFunction::Impl::matches(const KernelSignature& sig, std::span<const Arg> given,
                                const detail::OptionsKey& options, const detail::CacheEntry& expected,
                                detail::CallFrame& call) const {
  using namespace detail;
  const std::size_t n = param_count;
  if (!(options == expected.options)) [[unlikely]]
    return false;
  if (given.size() != n) [[unlikely]] {
    // Parameters left to their defaults (a call of too many or too few arguments raises here
    // as on the full path).
    bind_arguments(sig, kernel.defaults, given, call.bound());
    given = std::span<const Arg>(call.bound(), n);
  }
  call.args = given;
  const SpecializationRules& rules = *triton_rules;
  const HotRules hot(rules);
  const ParamRule* params = kernel.param_rules.data();
  const Arg* args = given.data();
  const ParamCode* want = expected.codes.data();
  bool same = true;
  std::size_t count = 0;
  call.tuple_code_count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    void* param = nullptr;
    const ParamCode code = specialize_argument<true>(rules, hot, params[i], args[i], sig, i, &param, &call.slots[i]);
    same &= code.bits() == want[i].bits();
    if (code.type != TypeCode::kConstexpr) [[likely]] {
      if (code.type >= TypeCode::kDescriptor) [[unlikely]] {
        if (code.type == TypeCode::kTuple) {
          count = pack_tuple(sig, args[i], i, count, call);
          continue;
        }
        // Only while every code so far matched: then the entry's argument is a descriptor too.
        if (same) same = same_descriptor_key(args[i], expected.constexprs[i]);
      }
      call.kernel_params[count++] = param;
    } else {
      same &= same_constexpr(args[i], expected.constexprs[i]);
    }
  }
  call.kernel_param_count = count;
  if (call.tuple_code_count != 0 || !expected.tuple_codes.empty()) [[unlikely]] {
    // The descriptors inside only once the tuples' codes match: then they sit where the entry's do.
    same =
        same &&
        std::ranges::equal(std::span<const ParamCode>(call.tuple_codes, call.tuple_code_count), expected.tuple_codes) &&
        expected.same_tuple_keys(given);
  }
  return same;
}

const detail::CacheEntry* JitFunction::Impl::find(CUcontext ctx, const detail::OptionsKey& options,
                                                  detail::CallFrame& call) const noexcept {
  detail::ContextKernels* c = context_of(ctx);
  call.context = c;
  if (c == nullptr) return nullptr;
  return c->table.find(call.hash, call.codes_of(param_count), call.args, options);
}

}  // namespace tritonrt

// Walking CompileOptions' fields, all driven by TRITONRT_COMPILE_OPTIONS (tritonrt/options.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "tritonrt/options.h"

namespace tritonrt::detail {

/// Calls `f(name, field)` for every option, set or not, in the list's order.
template <class Options, class F>
void for_each_option(Options& options, F&& f) {
#define TRITONRT_VISIT_OPTION(type, name) f(#name, options.name);
  TRITONRT_COMPILE_OPTIONS(TRITONRT_VISIT_OPTION)
#undef TRITONRT_VISIT_OPTION
}

/// CompileOptions packed exactly into three words, compared on every cache hit: each int
/// option 32 bits of words[0..1], then in words[2] one presence bit per int option and two
/// bits (set, value) per bool option.
struct OptionsKey {
  std::uint64_t words[3] = {0, 0, 0};

  [[gnu::always_inline]] explicit OptionsKey(const CompileOptions& o) noexcept {
    unsigned int_slot = 0;
    unsigned flag_bit = 0;
#define TRITONRT_PACK_OPTION(type, name) pack(o.name, int_slot, flag_bit);
    TRITONRT_COMPILE_OPTIONS(TRITONRT_PACK_OPTION)
#undef TRITONRT_PACK_OPTION
  }
  friend bool operator==(const OptionsKey&, const OptionsKey&) = default;

 private:
  [[gnu::always_inline]] void pack(const std::optional<int>& v, unsigned& int_slot, unsigned& flag_bit) noexcept {
    words[int_slot / 2] |= static_cast<std::uint64_t>(static_cast<std::uint32_t>(v.value_or(0)))
                           << (32 * (int_slot % 2));
    words[2] |= static_cast<std::uint64_t>(v.has_value()) << flag_bit;
    ++int_slot;
    ++flag_bit;
  }
  [[gnu::always_inline]] void pack(const std::optional<bool>& v, unsigned&, unsigned& flag_bit) noexcept {
    words[2] |= static_cast<std::uint64_t>(v.has_value() ? 2 | static_cast<int>(*v) : 0) << flag_bit;
    flag_bit += 2;
  }
};

// Four int options fill words[0..1]; a fifth needs a fourth word.
#define TRITONRT_COUNT_INT_OPTION(type, name) +(std::is_same_v<type, int> ? 1 : 0)
static_assert(0 TRITONRT_COMPILE_OPTIONS(TRITONRT_COUNT_INT_OPTION) <= 4, "OptionsKey packs at most four int options");
#undef TRITONRT_COUNT_INT_OPTION

/// The options a call compiles with as Triton resolves them for `target`: each option whose
/// default Triton's backend fixes (num_warps 4, num_stages 3 on CUDA and 2 on HIP, num_ctas 1,
/// launch_pdl and launch_cooperative_grid off) set to it where the call leaves it unset, so
/// that calls Triton compiles alike are keyed alike. enable_fp_fusion and debug stay as given:
/// their defaults come from the environment and the kernel. tests/python/test_cli.py checks
/// these defaults against the installed Triton's.
CompileOptions effective_options(const CompileOptions& given, const Target& target);

/// The options that are set, in words and in the list's order: "num_warps=4, num_stages=3";
/// "defaults" when none is. What keys and messages spell.
std::string options_words(const CompileOptions& options);

}  // namespace tritonrt::detail

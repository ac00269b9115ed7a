// Where and how a kernel is compiled: the target GPU and Triton's compile options.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tritonrt {

/// A compilation target, as Triton's GPUTarget: backend, architecture and warp size.
/// `Target::parse("cuda:90")`, `Target::parse("hip:gfx942")`; `Target::current()` asks the
/// driver for the current device, so it needs a GPU; explicit targets do not.
struct Target {
  std::string backend{};  ///< "cuda" or "hip"
  std::string arch{};     ///< "90" (compute capability) or "gfx942"
  int warp_size = 32;

  /// Parses "cuda:<capability>" or "hip:<gfx arch>", with an optional ":<warp size>" as
  /// Triton's AOT compiler writes targets (it must be the one the architecture runs);
  /// throws TargetError.
  static Target parse(std::string_view text);
  /// The CUDA target of a compute capability: `Target::cuda(9, 0)` is cuda:90.
  static Target cuda(int major, int minor);
  /// The target of the current CUDA device; throws DriverError without one.
  static Target current();
  /// "cuda:90"
  std::string str() const;

  friend bool operator==(const Target&, const Target&) = default;
};

/// Triton's compile options that a call may set, as (C++ type, Triton's option name). This
/// one list defines `CompileOptions` and everything that walks its fields (cache keys, the
/// options handed to Triton, the command-line flags).
#define TRITONRT_COMPILE_OPTIONS(X) \
  X(int, num_warps)                 \
  X(int, num_stages)                \
  X(int, num_ctas)                  \
  X(int, maxnreg)                   \
  X(bool, enable_fp_fusion)         \
  X(bool, launch_pdl)               \
  X(bool, launch_cooperative_grid)  \
  X(bool, debug)

/// Triton compile options. An unset option takes the value Triton's backend defaults to
/// (or the kernel's own, for debug), exactly as `kernel[grid](...)` without it would:
/// `CompileOptions{.num_warps = 8}`.
struct CompileOptions {
#define TRITONRT_OPTION_FIELD(type, name) std::optional<type> name{};
  TRITONRT_COMPILE_OPTIONS(TRITONRT_OPTION_FIELD)
#undef TRITONRT_OPTION_FIELD

  friend bool operator==(const CompileOptions&, const CompileOptions&) = default;
};

}  // namespace tritonrt

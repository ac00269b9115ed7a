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
  std::string backend;  ///< "cuda" or "hip"
  std::string arch;     ///< "90" (compute capability) or "gfx942"
  int warp_size = 32;

  /// Parses "cuda:<capability>" or "hip:<gfx arch>"; throws TargetError.
  static Target parse(std::string_view text);
  /// The target of the current CUDA device; throws DriverError without one.
  static Target current();
  /// "cuda:90"
  std::string str() const;

  friend bool operator==(const Target&, const Target&) = default;
};

/// Triton compile options. An unset option takes the value Triton's backend defaults to
/// (or the kernel's own, for debug), exactly as `kernel[grid](...)` without it would.
struct CompileOptions {
  std::optional<int> num_warps;
  std::optional<int> num_stages;
  std::optional<int> num_ctas;
  std::optional<int> maxnreg;
  std::optional<bool> enable_fp_fusion;
  std::optional<bool> launch_pdl;
  std::optional<bool> launch_cooperative_grid;
  std::optional<bool> debug;

  friend bool operator==(const CompileOptions&, const CompileOptions&) = default;
};

}  // namespace tritonrt

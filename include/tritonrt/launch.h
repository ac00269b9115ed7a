// Launching: grid, stream, options, and the scratch memory some kernels ask for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>

#include "tritonrt/arg.h"
#include "tritonrt/options.h"

namespace tritonrt {

struct KernelSignature;
namespace detail {
class ParamNames;
}

/// Number of programs along each axis (Triton's grid). A zero dimension launches nothing.
struct Grid {
  std::int64_t x = 1;
  std::int64_t y = 1;
  std::int64_t z = 1;
};

/// The arguments of one call after defaults were applied, for computing a grid from
/// constexprs: `[](const BoundArgs& a) { return Grid{cdiv(n, a.integer("BLOCK"))}; }`.
class BoundArgs {
 public:
  BoundArgs(const KernelSignature& signature, std::span<const Arg> values) : signature_(signature), values_(values) {}
  /// The same with the kernel's name index: what the library hands a grid function, a C++
  /// heuristic or config hook, at a launch and at a tuning's trials.
  BoundArgs(const KernelSignature& signature, std::span<const Arg> values, const detail::ParamNames* names)
      : signature_(signature), values_(values), names_(names) {}
  /// The argument of parameter `name`; throws ArgumentError when there is none.
  const Arg& operator[](std::string_view name) const;
  /// Every parameter's argument, in the kernel's parameter order.
  std::span<const Arg> values() const noexcept { return values_; }
  /// The integer value of parameter `name`; throws ArgumentError if it is not an integer.
  std::int64_t integer(std::string_view name) const;

 private:
  const KernelSignature& signature_;
  std::span<const Arg> values_;
  const detail::ParamNames* names_ = nullptr;
};

/// How to launch: grid (fixed, or computed from the call's arguments), stream and options.
///
/// The kernel runs on `stream` (a CUstream; nullptr is the legacy default stream of the
/// calling thread's current context). The device is the one of the stream's context; the
/// kernel's module is loaded once per context and never used in another.
struct LaunchConfig {
  Grid grid{};
  std::function<Grid(const BoundArgs&)> grid_fn{};  ///< when set, replaces `grid`
  void* stream = nullptr;
  CompileOptions options{};
  /// For an autotuned kernel: the config to run, by its index in the `@triton.autotune`
  /// configs, instead of tuning (no pruning, no timing; its pre_hook runs), with the same
  /// hash as Python's call with that config's values and options. -1: tune as Triton does.
  std::ptrdiff_t autotune_config = -1;
};

/// Ceiling division, for grids: `cdiv(n, 1024)`.
constexpr std::int64_t cdiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

/// Provides the global and profile scratch memory that some kernels need (Triton's
/// `triton.set_allocator`). Allocation and release are ordered on the launch stream, so an
/// allocator that is stream-ordered stays correct under CUDA graph capture.
class ScratchAllocator {
 public:
  virtual ~ScratchAllocator() = default;
  /// Returns device memory of at least `bytes`, aligned to `alignment`, usable on `stream`.
  virtual void* allocate(std::size_t bytes, std::size_t alignment, void* stream) = 0;
  /// Gives the memory back once the work enqueued on `stream` so far has used it.
  virtual void release(void* pointer, void* stream) noexcept = 0;
};

/// Replaces the process's scratch allocator; nullptr restores the default, which uses the
/// driver's stream-ordered cuMemAllocAsync / cuMemFreeAsync.
void set_scratch_allocator(std::shared_ptr<ScratchAllocator> allocator);

}  // namespace tritonrt

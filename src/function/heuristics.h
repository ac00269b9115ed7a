// A @triton.heuristics layer of a decorated kernel: each heuristic's value for a call, run in
// Python once per distinct input it read (and device), then looked up; values another
// process can use are recorded in tritonrt's index (and bundled) with what they read.
#pragma once

#include <cstddef>

#include "function/decorators.h"

namespace tritonrt::detail {

class Heuristics {
 public:
  /// Layer `layer` of `kernel`; `first` is the number of its first heuristic over all layers
  /// (memos and C++ replacements are numbered so).
  Heuristics(const KernelDescription& kernel, std::size_t layer, std::size_t first)
      : kernel_(kernel), layer_(layer), first_(first) {}

  /// Sets each heuristic's value into `r` (a parameter, or a compile option), in Triton's
  /// order, each seeing the ones before it. A hit takes no lock and calls no Python.
  void apply(Resolution& r) const;

 private:
  Arg value(std::size_t index, Resolution& r) const;
  [[gnu::cold]] Arg miss(std::size_t index, Resolution& r) const;

  const KernelDescription& kernel_;
  std::size_t layer_, first_;
};

}  // namespace tritonrt::detail

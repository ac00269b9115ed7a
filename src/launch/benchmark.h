// Timing kernel launches as Triton's autotuner does (triton.testing.do_bench).
#pragma once

#include <array>
#include <functional>

namespace tritonrt::detail {

/// Runs `run` (enqueueing work on `stream`) as do_bench does: once, then an estimate over
/// five runs, warm-up runs for `warmup_ms` and timed runs for `rep_ms` by that estimate, the
/// L2 cache flushed (256 MiB zeroed) before each timed run, each timed with a pair of
/// events. Returns the 0.5, 0.2 and 0.8 quantiles of the timed runs in milliseconds.
std::array<double, 3> benchmark(const std::function<void()>& run, void* stream, double warmup_ms = 25,
                                double rep_ms = 100);

}  // namespace tritonrt::detail

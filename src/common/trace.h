// What tritonrt does that takes time, made visible: an NVTX range for its lifetime, so that
// Nsight Systems shows where a slow first call went (the header-only NVTX 3 of the CUDA
// toolkit: nothing is loaded unless a profiler injects itself), and with TRITONRT_LOG=info
// (or debug) a log line saying how long it took.
#pragma once

#include <chrono>
#include <string>

namespace tritonrt::detail {

class Traced {
 public:
  /// `what` names the step, e.g. "kernel 'add_kernel': compiling for cuda:90".
  explicit Traced(std::string what);
  ~Traced();
  Traced(const Traced&) = delete;
  Traced& operator=(const Traced&) = delete;

  /// Added to the log line after the duration, e.g. "(from Triton's cache)".
  void note(std::string text) { note_ = std::move(text); }

 private:
  std::string what_, note_;
  std::chrono::steady_clock::time_point start_;
  int exceptions_;
};

}  // namespace tritonrt::detail

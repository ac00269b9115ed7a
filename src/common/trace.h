// What tritonrt does that takes time, made visible: an NVTX range for its lifetime, so that
// Nsight Systems shows where a slow first call went (the header-only NVTX 3 of the CUDA
// toolkit: nothing is loaded unless a profiler injects itself; none where tritonrt was built
// without the toolkit), and with TRITONRT_LOG=info (or debug) a log line saying how long it took.
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <string>

#include "common/errors.h"

namespace tritonrt::detail {

class Traced {
 public:
  /// Names the step, e.g. Traced({"add_kernel"}, "compiling for {}", target): the range is
  /// "tritonrt: kernel 'add_kernel': compiling for cuda:90".
  template <class... Args>
  Traced(const ErrorSite& site, fmt::format_string<Args...> format, Args&&... args)
      : Traced(message_about(site, fmt::format(format, std::forward<Args>(args)...))) {}
  ~Traced();
  Traced(const Traced&) = delete;
  Traced& operator=(const Traced&) = delete;

  /// Added to the log line after the duration, e.g. "(from Triton's cache)".
  void note(std::string text) { note_ = std::move(text); }

 private:
  explicit Traced(std::string what);

  std::string what_, note_;
  std::chrono::steady_clock::time_point start_;
  int exceptions_;
};

}  // namespace tritonrt::detail

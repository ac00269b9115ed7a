#include "common/trace.h"

#include <nvtx3/nvToolsExt.h>

#include <exception>

#include "common/log.h"

namespace tritonrt::detail {

Traced::Traced(std::string what)
    : what_(std::move(what)), start_(std::chrono::steady_clock::now()), exceptions_(std::uncaught_exceptions()) {
  nvtxRangePushA(fmt::format("tritonrt: {}", what_).c_str());
}

Traced::~Traced() {
  nvtxRangePop();
  if (!log_enabled(LogLevel::info)) return;
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start_;
  const bool failed = std::uncaught_exceptions() > exceptions_;
  write_log(LogLevel::info, fmt::format("{}: {} {:.1f} ms{}{}", what_, failed ? "failed after" : "took", took.count(),
                                        note_.empty() ? "" : " ", note_));
}

}  // namespace tritonrt::detail

#include "common/trace.h"

#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <exception>

#include "common/errors.h"
#include "common/log.h"

namespace tritonrt::detail {

Traced::Traced(std::string what)
    : what_(std::move(what)), start_(std::chrono::steady_clock::now()), exceptions_(std::uncaught_exceptions()) {
  what_ = without_prefix(std::move(what_));  // error_message's prefix: the log adds its own
  nvtxRangePushA(("tritonrt: " + what_).c_str());
}

Traced::~Traced() {
  nvtxRangePop();
  if (!log_enabled(LogLevel::info)) return;
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  char duration[32];
  std::snprintf(duration, sizeof duration, "%.1f ms", ms);
  const bool failed = std::uncaught_exceptions() > exceptions_;
  log(LogLevel::info, what_ + (failed ? ": failed after " : ": took ") + duration + (note_.empty() ? "" : " " + note_));
}

}  // namespace tritonrt::detail

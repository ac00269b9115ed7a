#include "common/trace.h"

#if TRITONRT_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

#include <exception>

#include "common/log.h"

namespace tritonrt::detail {

Traced::Traced(std::string what)
    : what_(std::move(what)), start_(std::chrono::steady_clock::now()), exceptions_(std::uncaught_exceptions()) {
#if TRITONRT_HAVE_NVTX
  nvtxRangePushA(fmt::format("tritonrt: {}", what_).c_str());
#endif
}

Traced::~Traced() {
#if TRITONRT_HAVE_NVTX
  nvtxRangePop();
#endif
  if (!log_enabled(LogLevel::info)) return;
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start_;
  const bool failed = std::uncaught_exceptions() > exceptions_;
  write_log(LogLevel::info, fmt::format("{}: {} {:.1f} ms{}{}", what_, failed ? "failed after" : "took", took.count(),
                                        note_.empty() ? "" : " ", note_));
}

}  // namespace tritonrt::detail

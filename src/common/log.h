// tritonrt's log (include/tritonrt/log.h): messages are formatted with {fmt}, and only when
// their level is reported.
//
//     log(LogLevel::info, "loaded the bundle {} ({} kernels)", path, count);
//     log_about(LogLevel::debug, {kernel_name}, "artifact for {} found in the index", target);
#pragma once

#include <fmt/format.h>

#include <string_view>

#include "common/errors.h"
#include "tritonrt/log.h"

namespace tritonrt::detail {

/// Whether messages of `level` are reported: check before work done only for a message.
inline bool log_enabled(LogLevel level) noexcept { return level != LogLevel::off && level <= log_level(); }

/// Hands one formatted message to the handler (stderr by default), whatever the level in
/// force: callers check log_enabled, or report regardless (TRITON_PRINT_AUTOTUNING).
void write_log(LogLevel level, std::string_view message);

/// A yes/no setting of the environment, read one way for every variable: 1, true, yes, on or
/// 0, false, no, off, in any case; unset or empty gives `fallback`, anything else too, with
/// a warning (once per variable).
bool environment_switch(const char* variable, bool fallback);

template <class... Args>
void log(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  if (log_enabled(level)) write_log(level, printable(fmt::format(format, std::forward<Args>(args)...)));
}

/// The same about a kernel (and parameter): "kernel 'add_kernel': <message>".
template <class... Args>
void log_about(LogLevel level, const ErrorSite& site, fmt::format_string<Args...> format, Args&&... args) {
  if (log_enabled(level)) write_log(level, message_about(site, fmt::format(format, std::forward<Args>(args)...)));
}

}  // namespace tritonrt::detail

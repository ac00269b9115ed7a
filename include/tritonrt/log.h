// What tritonrt reports while it works: compiles, module loads, index and bundle hits and
// misses, tuning, each step that takes time with its duration, and warnings such as a damaged
// cache entry set aside. By default warnings go to stderr; TRITONRT_LOG=off|warning|info|debug
// or set_log_level picks how much, set_log_handler where it goes:
//
//     tritonrt::set_log_level(tritonrt::LogLevel::info);
//     tritonrt::set_log_handler([](tritonrt::LogLevel level, std::string_view message) {
//       my_logger.log(level == tritonrt::LogLevel::warning ? WARN : INFO, message);
//     });
//
// The same steps are NVTX ranges named "tritonrt: ...", which Nsight Systems shows.
#pragma once

#include <functional>
#include <string_view>

namespace tritonrt {

/// How much is reported; each level includes the ones before it.
enum class LogLevel {
  off,      ///< nothing
  warning,  ///< what went wrong and was worked around (the default)
  info,     ///< also each step that takes time, with its duration; bundles loaded; tuning choices
  debug,    ///< also what the index or a bundle served, and why not
};

/// The level in force: TRITONRT_LOG's (read once) until set_log_level is called.
LogLevel log_level() noexcept;

/// Reports `level` and the levels before it from now on, whatever TRITONRT_LOG says.
void set_log_level(LogLevel level) noexcept;

/// Receives each reported message (without the "tritonrt: <level>: " prefix that stderr's
/// lines carry). It is called on the thread that reports, possibly from several at once.
using LogHandler = std::function<void(LogLevel level, std::string_view message)>;

/// Sends messages to `handler` instead of stderr; an empty handler restores stderr.
void set_log_handler(LogHandler handler);

}  // namespace tritonrt

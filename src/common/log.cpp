#include "common/log.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace tritonrt::detail {

LogLevel log_level() noexcept {
  static const LogLevel level = [] {
    const char* text = std::getenv("TRITONRT_LOG");
    const std::string_view value = text == nullptr ? "" : text;
    if (value == "off" || value == "0") return LogLevel::off;
    if (value == "info") return LogLevel::info;
    if (value == "debug") return LogLevel::debug;
    return LogLevel::warning;
  }();
  return level;
}

void log(LogLevel level, std::string_view message, bool force) {
  if (!force && !log_enabled(level)) return;
  static constexpr const char* kNames[] = {"", "warning", "info", "debug"};
  // Messages built by error_message carry the prefix this line starts with already.
  constexpr std::string_view kPrefix = "tritonrt: ";
  if (message.starts_with(kPrefix)) message.remove_prefix(kPrefix.size());
  std::string line(kPrefix);
  line.append(kNames[static_cast<int>(level)]).append(": ").append(message).append("\n");
  std::fwrite(line.data(), 1, line.size(), stderr);  // one write: lines of threads do not interleave
}

}  // namespace tritonrt::detail

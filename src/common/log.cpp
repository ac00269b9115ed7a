#include "common/log.h"

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <string>

namespace tritonrt {
namespace {

constexpr int kUnread = -1;
std::atomic<int> level_in_force{kUnread};

LogLevel level_from_environment() noexcept {
  const char* text = std::getenv("TRITONRT_LOG");
  const std::string_view value = text == nullptr ? "" : text;
  if (value == "off" || value == "0") return LogLevel::off;
  if (value == "info") return LogLevel::info;
  if (value == "debug") return LogLevel::debug;
  if (!value.empty() && value != "warning") {
    // A misspelt level would otherwise look like a quiet program: said once, on the default
    // level's channel.
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true)) {
      try {
        detail::write_log(LogLevel::warning,
                          fmt::format("TRITONRT_LOG={} is not a level tritonrt knows (off, warning, info, debug); "
                                      "reporting warnings only",
                                      detail::printable(value)));
      } catch (...) {
        // Out of memory while formatting: the level is still the default.
      }
    }
  }
  return LogLevel::warning;
}

// The handler set by set_log_handler, or null for stderr; copied out under the lock and
// called outside it, so a slow handler holds nobody up and may be replaced meanwhile.
std::mutex handler_mutex;
std::shared_ptr<const LogHandler> handler;

}  // namespace

LogLevel log_level() noexcept {
  int level = level_in_force.load(std::memory_order_relaxed);
  if (level == kUnread) {
    // Two first readers agree on the environment's level; a set_log_level in between wins.
    int expected = kUnread;
    level_in_force.compare_exchange_strong(expected, static_cast<int>(level_from_environment()));
    level = level_in_force.load(std::memory_order_relaxed);
  }
  return static_cast<LogLevel>(level);
}

void set_log_level(LogLevel level) noexcept { level_in_force.store(static_cast<int>(level)); }

void set_log_handler(LogHandler new_handler) {
  auto replacement = new_handler ? std::make_shared<const LogHandler>(std::move(new_handler)) : nullptr;
  std::lock_guard lock(handler_mutex);
  handler = std::move(replacement);
}

namespace detail {

bool environment_switch(const char* variable, bool fallback) {
  const char* text = std::getenv(variable);
  if (text == nullptr || *text == '\0') return fallback;
  std::string value(text);
  for (char& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* on : {"1", "true", "yes", "on"}) {
    if (value == on) return true;
  }
  for (const char* off : {"0", "false", "no", "off"}) {
    if (value == off) return false;
  }
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::lock_guard lock(mutex);
  if (warned.insert(variable).second) {
    log(LogLevel::warning, "{}={} is not a switch tritonrt reads (1, true, yes, on or 0, false, no, off); taken as {}",
        variable, printable(text), fallback ? "on" : "off");
  }
  return fallback;
}

void write_log(LogLevel level, std::string_view message) {
  std::shared_ptr<const LogHandler> to;
  {
    std::lock_guard lock(handler_mutex);
    to = handler;
  }
  if (to) {
    try {
      (*to)(level, message);
      return;
    } catch (...) {
      // Messages come from destructors and error paths too: a handler's failure must not
      // escape there. The message goes to stderr instead.
    }
  }
  static constexpr std::string_view kNames[] = {"", "warning", "info", "debug"};
  // One write per line: lines of several threads do not interleave.
  const std::string line = fmt::format("tritonrt: {}: {}\n", kNames[static_cast<int>(level)], message);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace detail
}  // namespace tritonrt

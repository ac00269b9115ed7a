// tritonrt's log on stderr: what it did for you that you may want to know about (a damaged
// cache entry set aside, a compile, a tuning run). TRITONRT_LOG picks how much: off,
// warning (the default), info or debug.
#pragma once

#include <string_view>

namespace tritonrt::detail {

enum class LogLevel { off, warning, info, debug };

/// The level TRITONRT_LOG asks for, read once.
LogLevel log_level() noexcept;

/// Whether messages of `level` are written: check before building an expensive message.
inline bool log_enabled(LogLevel level) noexcept { return level != LogLevel::off && level <= log_level(); }

/// Writes one line "tritonrt: <level>: <message>" to stderr when `level` is enabled, or
/// whatever the level when `force`d (e.g. TRITON_PRINT_AUTOTUNING asks for tuning's lines).
void log(LogLevel level, std::string_view message, bool force = false);

}  // namespace tritonrt::detail

// Whole-file reads and writes, as the index and bundles use them.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace tritonrt::detail {

/// The file's bytes, or nullopt when it cannot be read.
std::optional<std::string> read_file(const std::filesystem::path& path);

/// Writes `bytes` to `path` (creating its folder) through a temporary file renamed into
/// place, so that readers in any process see the whole file or none. Returns "" when
/// written, otherwise why not (the temporary file is removed).
std::string write_whole_file(const std::filesystem::path& path, const std::string& bytes);

}  // namespace tritonrt::detail

// `tritonrt bundle create` (with --calls: each call compiled for each target first, then exactly
// those artifacts packed) and what `bundle list` asks of a file.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>

#include "tritonrt/bundle.h"

namespace tritonrt::cli {

/// Whether `path` starts as an ELF file does (a program or shared library to list the
/// embedded bundles of); a bundle starts with "tritonrt-bundle".
bool is_elf(const std::filesystem::path& path);

/// `bundle create FILE`: what `filter` takes of the index, or with `calls_file` the calls it
/// lists compiled for `filter.targets` first; a dependency file too where `depfile` is given.
/// Prints what the bundle holds on `out`.
void create_bundle_command(std::ostream& out, const std::filesystem::path& file, BundleFilter filter,
                           const std::string& calls_file, const std::string& depfile);

}  // namespace tritonrt::cli

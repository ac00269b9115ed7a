// The files of tritonrt's index (store/index.h): each a header line "tritonrt-index <format>
// <kind> <json bytes> <binary bytes> <SHA-256 of both>", then the JSON, then the binary
// (artifacts only). Read header first, never past what it says, and only regular files.
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "common/json.h"

namespace tritonrt::detail {

/// The index's layout and record format (its folder is `v<kIndexFormat>`). 2: a kernel named
/// by path is recorded with the file it was imported from (format 1 could record another
/// copy of its package); a kernel named by module with where its import looked. 3: a kernel's
/// record names what the bridge observed it was made from (files and folders with their
/// stamps, modules with where they are found, environment variables set or unset). 4:
/// artifacts keyed by their options as Triton resolves them, in words.
inline constexpr int kIndexFormat = 4;

/// A record file's header line, read before anything else of the file.
struct IndexHeader {
  std::size_t header_bytes = 0;  ///< the line with its newline
  std::size_t json_bytes = 0, binary_bytes = 0;
  std::string sha256;  ///< of the JSON and binary together
};

/// The header at the start of `bytes` for a record of `kind`, or nullopt with `why`: not a
/// header, another format or kind, or sizes past what tritonrt reads (kMaxTextBytes of JSON,
/// kMaxBinaryBytes of binary).
std::optional<IndexHeader> parse_index_header(std::string_view bytes, std::string_view kind, std::string& why);

/// The record file of `kind` holding `json` and `binary`, as the index writes it.
std::string compose_index_record(std::string_view kind, std::string_view json, std::string_view binary);

/// A record read and checked: its JSON object and its binary (artifacts only).
struct IndexRecord {
  nlohmann::json json;
  std::string binary;
};

/// The record of `kind` that `bytes` hold, or why they are not one (header, size, checksum,
/// JSON). What the index reads from files, in memory (tests/fuzz reads it so).
std::variant<IndexRecord, std::string> parse_index_record(std::string_view kind, std::string_view bytes);

/// Reads the fields of a record of `kind`, each failure an ArtifactError naming the field.
JsonReader<ArtifactError> index_record_reader(std::string_view kind);

/// What the file at `path` holds: nothing (it is absent), its record, or why it is not a
/// record of `kind`. The header is read and checked first, the rest only as far as it says
/// and within the limits, the binary only when `with_binary` (then its checksum is checked
/// only when there is no binary).
std::variant<std::monostate, IndexRecord, std::string> read_index_record(const std::filesystem::path& path,
                                                                         std::string_view kind, bool with_binary);

}  // namespace tritonrt::detail

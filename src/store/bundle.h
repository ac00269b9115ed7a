// Bundles (include/tritonrt/bundle.h) as the compiler layer reads them.
//
// A bundle file: a header line "tritonrt-bundle <format> <table bytes> <SHA-256 of the
// table>", the table (JSON: per kernel its identity, what `bundle list` shows, and where its
// entry lies), then the data: per kernel its binaries and its entry (JSON: description,
// specialization rules, source files with their hashes, artifacts' keys, metadata, offsets,
// sizes and SHA-256, autotuners' choices, heuristics' recorded values). The table lists each
// kernel's artifacts by key and Triton hash, for `bundle list`. Loading maps the file and checks the table
// only; a kernel's entry is checked and read when the kernel is first got, a binary when it is first used, so a bundle
// of thousands of kernels loads in the time its table takes.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tritonrt/artifact.h"

namespace tritonrt::detail {

/// A bundle file's first word, and the format this tritonrt reads and writes.
inline constexpr std::string_view kBundleMagic = "tritonrt-bundle";
inline constexpr int kBundleFormat = 3;  // 2: options keyed as Triton resolves them; the table lists artifacts. 3: hooks

class MappedBundle;

/// One kernel of a mapped bundle (its table entry, read on first use); lives as long as the process.
struct MappedKernel {
  struct Binary {
    std::string binary_kind;
    std::string metadata;  ///< Triton's metadata JSON
    std::size_t offset = 0, size = 0;
    std::string sha256;
  };
  std::string identity, source, name;
  std::vector<std::string> targets;  ///< the targets it holds artifacts for
  std::size_t artifact_count = 0, choice_count = 0, heuristic_count = 0, hook_count = 0, bytes = 0;
  std::vector<std::pair<std::string, std::string>> held;  ///< its artifacts' keys and Triton hashes
  // Its entry: where it lies in the data, its checksum, and whether it was read (the fields
  // below are empty until then).
  std::size_t entry_offset = 0, entry_size = 0;
  std::string entry_sha256;
  bool complete = false;
  std::string description, rules;                                      ///< as the index holds them (src/store/index.h)
  std::vector<std::pair<std::string, std::string>> files;              ///< path, SHA-256 where it was compiled
  std::map<std::string, Binary> artifacts;                             ///< by key: target|options|specialization
  std::map<std::string, std::pair<std::size_t, std::string>> choices;  ///< by key: config, its text
  std::map<std::string, std::vector<std::string>> heuristics;          ///< by key: memo entries (function/memo.h)
  const MappedBundle* bundle = nullptr;

  /// The bundle's path, for messages.
  std::string where() const;
  /// What it holds, for a message: each artifact's key in words (artifact_words), ';'-separated,
  /// the first 16 and how many more.
  std::string artifact_list() const;
};


/// The loaded bundles' kernel for JitFunction::get(source, name), its entry read, or nullptr
/// with `why` saying why none serves it. Loads TRITONRT_BUNDLE's bundles on first use (a bad
/// one throws ArtifactError here, each time); a damaged entry is an ArtifactError.
const MappedKernel* find_bundled(std::string_view source, std::string_view name, std::string& why);

/// The target an artifact's metadata names; ArtifactError when the metadata does not read.
Target metadata_target(const MappedKernel& kernel, const std::string& key, const MappedKernel::Binary& binary);

/// The artifact bundled under `key`, nullopt when there is none; its binary checked against
/// its checksum and its metadata against `target`. A damaged one is an ArtifactError.
std::optional<Artifact> bundled_artifact(const MappedKernel& kernel, const std::string& key, const Target& target);

}  // namespace tritonrt::detail

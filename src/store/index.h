// tritonrt's own index of what it compiled: for each kernel, what a new process needs to
// specialize a call without Python (the bridge's description of the kernel and the
// installed Triton's specialization rules, with the files and environment they depend on),
// for each specialization + options + target the artifact (metadata and binary), each
// autotuner's choice per tuning key, and each heuristic's values per input it read.
//
// Layout: <dir>/v2/<kernel id>/kernel, and beside it <key hash>.artifact, <key hash>.choice
// and <key hash>.heuristic, each
// file a header line (format, kind, sizes, SHA-256 of the rest) then JSON (then the binary).
// Files are written to a temporary name and renamed, so readers in other processes see a
// whole file or none; a file that fails its checks is set aside (renamed `.invalid-*`) and
// reported, never used. Files are read header first, never past what it says; folders are
// created private to the user. Nothing here needs Python.
//
// An index is code: whoever can write into it chooses the binaries a program launches. Keep
// it (and bundles) only where no one else can write.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/index_record.h"
#include "tritonrt/artifact.h"

namespace tritonrt::detail {

/// The kernel's description and rules as the bridge wrote them (JSON), and the fingerprint
/// of the record (those, the files' contents, the environment) that its artifacts' keys
/// start with, so that an artifact compiled from other sources is never found.
struct IndexedKernel {
  std::string description;
  std::string rules;
  std::string fingerprint;
  std::vector<std::pair<std::string, std::string>> files;  ///< path, SHA-256 of its content
};

/// Everything the index holds for one fresh kernel, keys without the fingerprint (what
/// bundles are made of, src/store/bundle.h).
struct IndexListing {
  std::string source, name;
  IndexedKernel kernel;
  std::vector<std::pair<std::string, Artifact>> artifacts;  ///< key (target|options|specialization)
  struct Choice {
    std::string key;  ///< autotune <layer>|target|tuning key
    std::size_t config;
    std::string text;
  };
  std::vector<Choice> choices;
  /// Heuristics' recorded values: key (heuristic <n>), entries (JSON texts).
  std::vector<std::pair<std::string, std::vector<std::string>>> heuristics;
};

/// A kernel the index holds that a listing leaves out, and why. `source` and `name` are
/// empty where its own record could not be read (then only its folder is known).
struct SkippedKernel {
  std::string source, name;
  std::string line;  ///< "<name> of <source>: why", or "<folder>: why"
};

class KernelIndex {
 public:
  explicit KernelIndex(std::filesystem::path dir) : dir_(std::move(dir)) {}

  /// The process's index: TRITONRT_CACHE_DIR, or `tritonrt/` in Triton's cache folder as
  /// Triton finds it (TRITON_CACHE_DIR, else `.triton/cache` in $TRITON_HOME or the user's
  /// home folder). nullptr when TRITONRT_INDEX=off, or when there is no home folder (warned).
  static KernelIndex* get();

  const std::filesystem::path& dir() const { return dir_; }

  /// The kernel's record when it is there, whole and fresh: made from the file `source`
  /// names (when it names one), and everything the bridge observed it was made from as it
  /// was: each file and folder (by its stamps, else by its content), where each module imported
  /// by name would be found, each environment variable read or in Triton's cache key, and the
  /// TRITON_/MLIR_/LLVM_ environment (for a kernel named by module, also PYTHONPATH and the
  /// variables that choose the Python). Otherwise nullopt, with `why` saying what was
  /// missing, damaged (and set aside) or changed.
  std::optional<IndexedKernel> find_kernel(std::string_view source, std::string_view name, std::string& why) const;

  /// Records a kernel loaded through Python; `inputs` is the bridge's account of what it was
  /// made from (JSON: files with their stamps and SHA-256, the kernel's own file first (for a
  /// kernel named by path, `source` itself); modules with where they are found; environment
  /// variables). Returns the record's fingerprint, or "" when it could not be recorded.
  std::string put_kernel(std::string_view source, std::string_view name, const IndexedKernel& kernel,
                         const nlohmann::json& inputs) const;

  /// The artifact stored under `key` (the kernel's fingerprint, target, options and
  /// specialization) for the kernel,
  /// checked as Triton's cache entries are (src/store/triton_cache.h); a damaged one is set
  /// aside and reported, and nullopt returned.
  std::optional<Artifact> find_artifact(std::string_view source, std::string_view name, const std::string& key,
                                        const Target& target) const;

  void put_artifact(std::string_view source, std::string_view name, const std::string& key,
                    const Artifact& artifact) const;

  /// An autotuner's choice stored under `key` (the kernel's fingerprint, the decorator, the
  /// target and the tuning key): the config's index and its text as Triton prints it.
  std::optional<std::pair<std::size_t, std::string>> find_choice(std::string_view source, std::string_view name,
                                                                 const std::string& key) const;

  void put_choice(std::string_view source, std::string_view name, const std::string& key, std::size_t config,
                  const std::string& config_text) const;

  /// The values recorded for one heuristic under `key` (the kernel's fingerprint and the
  /// heuristic): JSON texts, one per input it was run on (src/function/decorators.cpp
  /// writes and reads them).
  std::vector<std::string> find_heuristic(std::string_view source, std::string_view name, const std::string& key) const;

  /// Adds `entry` to the values recorded under `key`, unless it is there already or the
  /// heuristic has kMaxHeuristicEntries; false in that last case (further inputs are not
  /// recorded: each process runs them in Python once).
  bool put_heuristic(std::string_view source, std::string_view name, const std::string& key,
                     const std::string& entry) const;
  static constexpr std::size_t kMaxHeuristicEntries = 256;

  /// Every kernel the index holds fresh, with its artifacts and choices for its current
  /// sources. Kernels left out (stale, damaged) are reported in `skipped`, one each.
  std::vector<IndexListing> list(std::vector<SkippedKernel>& skipped) const;

  /// The folder of the kernel's records (its record is `kernel` there).
  std::filesystem::path kernel_dir(std::string_view source, std::string_view name) const;
  /// The kernel's file for `key` with `extension` (.artifact, .choice, .heuristic), named by the key's hash.
  std::filesystem::path keyed_file(std::string_view source, std::string_view name, const std::string& key,
                                   std::string_view extension) const;

 private:
  /// Removes from `kernel_dir` the records of sources other than `fingerprint`'s, temporary
  /// files of writers that died, and files set aside more than a day ago.
  void remove_stale(const std::filesystem::path& kernel_dir, const std::string& fingerprint) const;

  std::filesystem::path dir_;
};

}  // namespace tritonrt::detail

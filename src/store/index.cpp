#include "store/index.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <system_error>
#include <variant>

#include "common/errors.h"
#include "common/json.h"
#include "common/log.h"
#include "common/record_key.h"
#include "common/sha256.h"
#include "store/files.h"
#include "store/index_environment.h"
#include "store/index_inputs.h"
#include "store/index_record.h"
#include "store/triton_cache.h"
#include "tritonrt/version.h"

namespace tritonrt::detail {
namespace {

// Moves the invalid file at `path` out of the way and reports `problem`.
void set_aside_invalid(const std::filesystem::path& path, std::string_view site, const std::string& problem) {
  const std::string moved = set_aside(path.string());
  log_about(LogLevel::warning, {site}, "{}; {}", problem, moved.empty() ? "it was gone" : "set aside as " + moved);
}

// Writes an index file; a failure costs a later recompile, so it is reported, not thrown.
void write_atomically(const std::filesystem::path& path, const std::string& bytes) {
  static std::atomic<bool> warned{false};
  if (const std::string why = write_whole_file(path, bytes, NewFolders::private_to_user); !why.empty()) {
    // Once per process: an unwritable index fails every write the same way.
    const LogLevel level = warned.exchange(true) ? LogLevel::debug : LogLevel::warning;
    log(level, "could not write the index file {} ({}); going on without it{}", path.string(), why,
        level == LogLevel::warning ? " (further failures are logged at debug level)" : "");
  }
}

// The record of `kind` at `path`; nullopt when there is none, or when it is damaged (then
// it is set aside and the reason logged, and `why` says so).
std::optional<IndexRecord> load(const std::filesystem::path& path, std::string_view kind, std::string_view site,
                                std::string& why, bool with_binary = true) {
  auto found = read_index_record(path, kind, with_binary);
  if (auto* r = std::get_if<IndexRecord>(&found)) return std::move(*r);
  if (std::holds_alternative<std::monostate>(found)) {
    why = "it is not in the index";
    return std::nullopt;
  }
  why = "its index file " + path.string() + " is invalid: " + std::get<std::string>(found);
  set_aside_invalid(path, site, why);
  return std::nullopt;
}

// The user's home folder as Python's os.path.expanduser finds it (HOME, else the password
// database), or "" when there is none.
std::string home_folder() {
  if (const char* home = std::getenv("HOME"); home && *home) return home;
  if (const passwd* entry = ::getpwuid(::getuid()); entry && entry->pw_dir && *entry->pw_dir) return entry->pw_dir;
  return "";
}

// Triton's own rule for its cache folder (TRITON_CACHE_DIR, else <TRITON_HOME or home>/.triton/cache),
// with tritonrt/ inside; TRITONRT_CACHE_DIR overrides it. "" when there is no home folder.
std::filesystem::path default_dir() {
  if (const char* dir = std::getenv("TRITONRT_CACHE_DIR"); dir && *dir) return dir;
  if (const char* dir = std::getenv("TRITON_CACHE_DIR"); dir && *dir) return std::filesystem::path(dir) / "tritonrt";
  const char* triton_home = std::getenv("TRITON_HOME");
  const std::string home = triton_home && *triton_home ? std::string(triton_home) : home_folder();
  if (home.empty()) return {};
  return std::filesystem::path(home) / ".triton" / "cache" / "tritonrt";
}

}  // namespace

KernelIndex* KernelIndex::get() {
  static KernelIndex* const index = []() -> KernelIndex* {
    if (!environment_switch("TRITONRT_INDEX", true)) return nullptr;
    const auto dir = default_dir();
    if (dir.empty()) {
      log(LogLevel::warning,
          "tritonrt's index is off: there is no home folder to keep it in (set HOME, TRITON_CACHE_DIR or "
          "TRITONRT_CACHE_DIR)");
      return nullptr;
    }
    // An index is code (store/index.h): one that someone else can write into is not used.
    struct stat status {};
    if (::stat(dir.c_str(), &status) == 0) {
      if (!S_ISDIR(status.st_mode)) {
        log(LogLevel::warning, "tritonrt's index is off: {} is not a folder (set TRITONRT_CACHE_DIR to a folder)",
            dir.string());
        return nullptr;
      }
      const bool foreign = status.st_uid != ::geteuid();
      const bool shared = (status.st_mode & S_IWOTH) != 0;
      if (foreign || shared) {
        log(LogLevel::warning,
            "tritonrt's index is off: its folder {} {} (an index is code: whoever can write into it chooses what "
            "runs); make it the user's own with mode 0700, or set TRITONRT_CACHE_DIR to another folder",
            dir.string(), foreign ? "belongs to another user" : "can be written by others");
        return nullptr;
      }
    }
    return new KernelIndex(dir);
  }();
  return index;
}

std::filesystem::path KernelIndex::kernel_dir(std::string_view source, std::string_view name) const {
  return dir_ / ("v" + std::to_string(kIndexFormat)) /
         Sha256().update(source).update(std::string_view("\0", 1)).update(name).hex().substr(0, 32);
}

std::filesystem::path KernelIndex::keyed_file(std::string_view source, std::string_view name, const std::string& key,
                                              std::string_view extension) const {
  return kernel_dir(source, name) / (sha256_hex(key).substr(0, 32) + std::string(extension));
}

std::optional<IndexedKernel> KernelIndex::find_kernel(std::string_view source, std::string_view name,
                                                      std::string& why) const {
  auto record = load(kernel_dir(source, name) / "kernel", "kernel", name, why);
  if (!record) return std::nullopt;
  const auto& j = record->json;
  const auto read = index_record_reader("kernel");
  try {
    if (read.field<std::string>(j, "source") != source || read.field<std::string>(j, "name") != name) {
      why = "its index entry is another kernel's";  // a 128-bit prefix collision
      return std::nullopt;
    }
    IndexedKernel kernel{read.field<std::string>(j, "description"),
                         read.field<std::string>(j, "rules"),
                         read.field<std::string>(j, "fingerprint"),
                         {}};
    // Another tritonrt may describe the same files otherwise.
    if (const auto made_by = read.field<std::string>(j, "tritonrt"); made_by != TRITONRT_VERSION) {
      why = "it was recorded by tritonrt " + made_by + ", this is " TRITONRT_VERSION;
      return std::nullopt;
    }
    const auto files = read.field<nlohmann::json>(j, "files");
    if (!files.is_array() || files.empty()) read.fail("field 'files' should be a non-empty list");
    for (const auto& file : files) {
      kernel.files.emplace_back(read.field<std::string>(file, "path"), read.field<std::string>(file, "sha256"));
    }
    // A kernel named by its file was compiled from that file, never from another copy.
    if (source.ends_with(".py") && kernel.files.front().first != source) {
      why =
          "its index entry was made from '" + kernel.files.front().first + "', not from '" + std::string(source) + "'";
      return std::nullopt;
    }
    why = inputs_changed(read, j, source);
    if (!why.empty()) return std::nullopt;
    return kernel;
  } catch (const Error& e) {
    why = "its index entry does not read: " + without_prefix(e.what());
    return std::nullopt;
  }
}

std::string KernelIndex::put_kernel(std::string_view source, std::string_view name, const IndexedKernel& kernel,
                                    const nlohmann::json& inputs) const {
  const auto read = index_record_reader("kernel");
  nlohmann::json files, modules;
  Environment observed;
  try {
    files = read.field<nlohmann::json>(inputs, "files");
    modules = read.field<nlohmann::json>(inputs, "modules");
    observed = environment_from(read, read.field<nlohmann::json>(inputs, "environment"));
    // A kernel named by its file is recorded only with that file first, as find_kernel checks.
    if (!files.is_array() || files.empty() ||
        (source.ends_with(".py") && read.field<std::string>(files.front(), "path") != source)) {
      return "";
    }
  } catch (const Error&) {
    return "";
  }
  nlohmann::json j = {{"source", source},
                      {"name", name},
                      {"tritonrt", TRITONRT_VERSION},
                      {"description", kernel.description},
                      {"rules", kernel.rules},
                      {"files", files},
                      {"modules", modules},
                      {"environment", environment_json(recorded_environment(source, observed))}};
  j["fingerprint"] = sha256_hex(dump_json(j));
  const std::string fingerprint = j["fingerprint"].get<std::string>();
  write_atomically(kernel_dir(source, name) / "kernel", compose_index_record("kernel", dump_json(j), ""));
  remove_stale(kernel_dir(source, name), fingerprint);
  return fingerprint;
}

namespace {

// The key a keyed record (artifact, choice, heuristic) holds, or "" when it does not read.
std::string record_key(const IndexRecord& record, std::string_view kind) {
  try {
    return index_record_reader(kind).field<std::string>(record.json, "key");
  } catch (const Error&) {
    return "";
  }
}

}  // namespace

void KernelIndex::remove_stale(const std::filesystem::path& kernel_dir, const std::string& fingerprint) const {
  using namespace std::chrono_literals;
  const auto now = std::filesystem::file_time_type::clock::now();
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(kernel_dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const auto& entry = *it;
    const auto& path = entry.path();
    const std::string file = path.filename().string();
    std::error_code local;  // one file's failure skips that file only
    const auto age = now - entry.last_write_time(local);
    if (local) continue;
    bool stale = false;
    if (file.find(".tmp-") != std::string::npos) {
      stale = age > 10min;  // a writer that died before renaming; a live one renames within seconds
    } else if (file.find(".invalid-") != std::string::npos) {
      stale = age > 24h;  // set aside for a day, for whoever wants to look at it
    } else if (const auto extension = path.extension().string();
               extension == ".artifact" || extension == ".choice" || extension == ".heuristic") {
      // Records of earlier sources: no process finds them any more. Their binaries are not read.
      const auto found = read_index_record(path, extension.substr(1), false);
      const auto* r = std::get_if<IndexRecord>(&found);
      const std::string key = r != nullptr ? record_key(*r, extension.substr(1)) : "";
      stale = !key.empty() && !key_of_record(key, fingerprint);
    }
    if (stale) std::filesystem::remove(path, local);
  }
}

namespace {

// The artifact a record holds, checked for `target`; nullopt with `problem` set when invalid.
std::optional<Artifact> artifact_from(IndexRecord& record, const std::filesystem::path& path, const Target& target,
                                      std::string& problem) {
  const auto read = index_record_reader("artifact");
  Artifact artifact;
  try {
    artifact.binary_kind = read.field<std::string>(record.json, "binary_kind");
    artifact.metadata = KernelMetadata::parse(read.field<std::string>(record.json, "metadata"));
  } catch (const Error& e) {
    problem = without_prefix(e.what());
    return std::nullopt;
  }
  artifact.binary = std::move(record.binary);
  artifact.cache_dir = path.parent_path().string();
  if (auto why = artifact_problem(artifact, target)) {
    problem = std::move(*why);
    return std::nullopt;
  }
  return artifact;
}

}  // namespace

std::optional<Artifact> KernelIndex::find_artifact(std::string_view source, std::string_view name,
                                                   const std::string& key, const Target& target) const {
  const auto path = keyed_file(source, name, key, ".artifact");
  std::string why;
  auto record = load(path, "artifact", name, why);
  if (!record) return std::nullopt;
  if (record_key(*record, "artifact") != key) return std::nullopt;  // a prefix collision
  std::string problem;
  if (auto artifact = artifact_from(*record, path, target, problem)) return artifact;
  set_aside_invalid(path, name, "its index file " + path.string() + " is invalid (" + problem + ")");
  return std::nullopt;
}

void KernelIndex::put_artifact(std::string_view source, std::string_view name, const std::string& key,
                               const Artifact& artifact) const {
  const nlohmann::json j = {{"key", key}, {"binary_kind", artifact.binary_kind}, {"metadata", artifact.metadata.json}};
  write_atomically(keyed_file(source, name, key, ".artifact"),
                   compose_index_record("artifact", dump_json(j), artifact.binary));
}

namespace {

// The config and its text a choice record holds.
std::optional<std::pair<std::size_t, std::string>> choice_from(const IndexRecord& record) {
  const auto read = index_record_reader("choice");
  try {
    return std::make_pair(read.field<std::size_t>(record.json, "config"), read.field<std::string>(record.json, "text"));
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<std::pair<std::size_t, std::string>> KernelIndex::find_choice(std::string_view source,
                                                                            std::string_view name,
                                                                            const std::string& key) const {
  std::string why;
  const auto record = load(keyed_file(source, name, key, ".choice"), "choice", name, why);
  if (!record || record_key(*record, "choice") != key) return std::nullopt;  // none, or a prefix collision
  return choice_from(*record);
}

void KernelIndex::put_choice(std::string_view source, std::string_view name, const std::string& key, std::size_t config,
                             const std::string& config_text) const {
  const nlohmann::json j = {{"key", key}, {"config", config}, {"text", config_text}};
  write_atomically(keyed_file(source, name, key, ".choice"), compose_index_record("choice", dump_json(j), ""));
}

namespace {

// The values a heuristic record holds (empty when they do not read).
std::vector<std::string> heuristic_values_from(const IndexRecord& record) {
  const auto read = index_record_reader("heuristic");
  std::vector<std::string> out;
  try {
    const auto entries = read.field<nlohmann::json>(record.json, "entries");
    if (!entries.is_array()) read.fail("field 'entries' should be a list");
    for (const auto& entry : entries) out.push_back(read.as<std::string>(entry, "entries"));
  } catch (const Error&) {
    out.clear();
  }
  return out;
}

}  // namespace

std::vector<std::string> KernelIndex::find_heuristic(std::string_view source, std::string_view name,
                                                     const std::string& key) const {
  std::string why;
  const auto record = load(keyed_file(source, name, key, ".heuristic"), "heuristic", name, why);
  if (!record || record_key(*record, "heuristic") != key) return {};  // none, or a prefix collision
  return heuristic_values_from(*record);
}

bool KernelIndex::put_heuristic(std::string_view source, std::string_view name, const std::string& key,
                                const std::string& entry) const {
  // Read, add, write whole: two processes adding at once may lose one entry, which only
  // means that input runs in Python once more.
  auto entries = find_heuristic(source, name, key);
  if (std::find(entries.begin(), entries.end(), entry) != entries.end()) return true;
  if (entries.size() >= kMaxHeuristicEntries) return false;
  entries.push_back(entry);
  const nlohmann::json j = {{"key", key}, {"entries", entries}};
  write_atomically(keyed_file(source, name, key, ".heuristic"), compose_index_record("heuristic", dump_json(j), ""));
  return true;
}

std::vector<IndexListing> KernelIndex::list(std::vector<SkippedKernel>& skipped) const {
  std::vector<IndexListing> out;
  std::error_code ec;
  std::vector<std::filesystem::path> kernels;
  // increment(ec), not ++: a folder removed meanwhile ends the listing, it does not throw.
  for (auto it = std::filesystem::directory_iterator(dir_ / ("v" + std::to_string(kIndexFormat)), ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec)) kernels.push_back(it->path());
  }
  std::sort(kernels.begin(), kernels.end());  // the same index lists the same way every time
  for (const auto& kernel_dir : kernels) {
    std::string why;
    const auto record = load(kernel_dir / "kernel", "kernel", "", why);  // no kernel to name yet
    if (!record) {
      if (std::filesystem::exists(kernel_dir / "kernel", ec))
        skipped.push_back({{}, {}, kernel_dir.string() + ": " + why});
      continue;
    }
    IndexListing listing;
    try {
      listing.source = index_record_reader("kernel").field<std::string>(record->json, "source");
      listing.name = index_record_reader("kernel").field<std::string>(record->json, "name");
    } catch (const Error& e) {
      skipped.push_back({{}, {}, kernel_dir.string() + ": " + without_prefix(e.what())});
      continue;
    }
    auto kernel = find_kernel(listing.source, listing.name, why);
    if (!kernel) {
      skipped.push_back({listing.source, listing.name, listing.name + " of " + listing.source + ": " + why});
      continue;
    }
    listing.kernel = std::move(*kernel);
    std::vector<std::filesystem::path> files;
    for (auto it = std::filesystem::directory_iterator(kernel_dir, ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
      files.push_back(it->path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& path : files) {
      const auto extension = path.extension().string();
      if (extension != ".artifact" && extension != ".choice" && extension != ".heuristic") continue;
      auto found = load(path, extension.substr(1), listing.name, why);
      if (!found) continue;
      const std::string filed = record_key(*found, extension.substr(1));
      const auto key = key_of_record(filed, listing.kernel.fingerprint);
      if (!key) continue;  // compiled from earlier sources, or unreadable
      const std::string rest(*key);
      if (extension == ".heuristic") {
        listing.heuristics.emplace_back(rest, heuristic_values_from(*found));
      } else if (extension == ".choice") {
        if (auto choice = choice_from(*found)) listing.choices.push_back({rest, choice->first, choice->second});
      } else {
        try {
          std::string problem;
          const auto parsed = RecordKey::parse(rest);
          if (!parsed) continue;
          const Target target = Target::parse(parsed->target);
          if (auto artifact = artifact_from(*found, path, target, problem)) {
            listing.artifacts.emplace_back(rest, std::move(*artifact));
          } else {
            set_aside_invalid(path, listing.name, "its index file " + path.string() + " is invalid (" + problem + ")");
          }
        } catch (const Error&) {
          continue;  // a key whose target this tritonrt does not read
        }
      }
    }
    out.push_back(std::move(listing));
  }
  return out;
}

}  // namespace tritonrt::detail

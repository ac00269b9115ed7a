#include "store/index.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>
#include <variant>

#include "common/errors.h"
#include "common/json.h"
#include "common/log.h"
#include "common/sha256.h"
#include "store/files.h"
#include "store/triton_cache.h"

extern char** environ;

namespace tritonrt::detail {
namespace {

constexpr std::string_view kMagic = "tritonrt-index";
constexpr int kFormat = 1;

// Variables of those prefixes that only say where Triton keeps or shows things: changing them
// changes no compiled kernel.
// (Not TRITON_HOME: with TRITON_KERNEL_OVERRIDE it picks the folder of kernels compiled in.)
constexpr std::string_view kPlaceVariables[] = {"TRITON_CACHE_DIR", "TRITON_DUMP_DIR", "TRITON_CACHE_MANAGER",
                                                "TRITON_REMOTE_CACHE_BACKEND", "TRITON_PRINT_AUTOTUNING"};

// The environment Triton's compile may read: every TRITON_, MLIR_ and LLVM_ variable but
// those above. A superset of what Triton's cache key covers (its list of cache-invalidating
// variables lives in libtriton, out of reach without Python), so a change here recompiles at
// worst.
std::map<std::string, std::string> compile_environment() {
  std::map<std::string, std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    const auto name = entry.substr(0, eq);
    if (std::find(std::begin(kPlaceVariables), std::end(kPlaceVariables), name) != std::end(kPlaceVariables)) continue;
    if (name.starts_with("TRITON_") || name.starts_with("MLIR_") || name.starts_with("LLVM_")) {
      out.emplace(name, entry.substr(eq + 1));
    }
  }
  return out;
}

// A record: "tritonrt-index <format> <kind> <json bytes> <binary bytes> <sha256 of both>\n",
// then the JSON, then the binary.
std::string record(std::string_view kind, const std::string& json, std::string_view binary) {
  const std::string digest = Sha256().update(json).update(binary).hex();
  std::string out = std::string(kMagic) + " " + std::to_string(kFormat) + " " + std::string(kind) + " " +
                    std::to_string(json.size()) + " " + std::to_string(binary.size()) + " " + digest + "\n";
  out += json;
  out += binary;
  return out;
}

struct Record {
  nlohmann::json json;
  std::string binary;
};

// The record of `kind` in `bytes`, or why it is not one.
std::variant<Record, std::string> parse_record(std::string_view kind, const std::string& bytes) {
  const auto newline = bytes.find('\n');
  if (newline == std::string::npos || newline > 256) return std::string("it has no header line");
  std::istringstream header(bytes.substr(0, newline));
  std::string magic, found_kind, digest;
  int format = 0;
  std::size_t json_size = 0, binary_size = 0;
  if (!(header >> magic >> format >> found_kind >> json_size >> binary_size >> digest) || magic != kMagic) {
    return std::string("its header is not a tritonrt index header");
  }
  if (format != kFormat) return "it is in format " + std::to_string(format) + ", this tritonrt reads format 1";
  if (found_kind != kind) return "it holds a " + found_kind + ", not a " + std::string(kind);
  const std::string_view body = std::string_view(bytes).substr(newline + 1);
  if (json_size > body.size() || binary_size != body.size() - json_size) {
    return "its size does not match its header (cut short or appended to)";
  }
  if (Sha256().update(body).hex() != digest) return std::string("its checksum does not match (damaged)");
  Record out;
  try {
    out.json = nlohmann::json::parse(body.substr(0, json_size));
  } catch (const nlohmann::json::exception&) {
    return std::string("its JSON does not parse");
  }
  if (!out.json.is_object()) return std::string("its JSON is not an object");
  out.binary = body.substr(json_size);
  return out;
}

// Moves the invalid file at `path` out of the way and reports `problem`.
void set_aside_invalid(const std::filesystem::path& path, std::string_view site, const std::string& problem) {
  const std::string moved = set_aside(path.string());
  log_about(LogLevel::warning, {site}, "{}; {}", problem, moved.empty() ? "it was gone" : "set aside as " + moved);
}

// Writes an index file; a failure costs a later recompile, so it is reported, not thrown.
void write_atomically(const std::filesystem::path& path, const std::string& bytes) {
  static std::atomic<bool> warned{false};
  if (const std::string why = write_whole_file(path, bytes); !why.empty()) {
    // Once per process: an unwritable index fails every write the same way.
    const LogLevel level = warned.exchange(true) ? LogLevel::debug : LogLevel::warning;
    log(level, "could not write the index file {} ({}); going on without it{}", path.string(), why,
        level == LogLevel::warning ? " (further failures are logged at debug level)" : "");
  }
}

// The record of `kind` at `path`; nullopt when there is none, or when it is damaged (then
// it is set aside and the reason logged, and `why` says so).
std::optional<Record> load(const std::filesystem::path& path, std::string_view kind, std::string_view site,
                           std::string& why) {
  const auto bytes = read_file(path);
  if (!bytes) {
    why = "it is not in the index";
    return std::nullopt;
  }
  auto parsed = parse_record(kind, *bytes);
  if (auto* r = std::get_if<Record>(&parsed)) return std::move(*r);
  why = "its index file " + path.string() + " is invalid: " + std::get<std::string>(parsed);
  set_aside_invalid(path, site, why);
  return std::nullopt;
}

std::filesystem::path default_dir() {
  if (const char* dir = std::getenv("TRITONRT_CACHE_DIR"); dir && *dir) return dir;
  if (const char* dir = std::getenv("TRITON_CACHE_DIR"); dir && *dir) return std::filesystem::path(dir) / "tritonrt";
  const char* home = std::getenv("TRITON_HOME");
  if (home == nullptr || *home == '\0') home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : "/tmp") / ".triton" / "cache" / "tritonrt";
}

}  // namespace

KernelIndex* KernelIndex::get() {
  static KernelIndex* const index = [] {
    const char* off = std::getenv("TRITONRT_INDEX");
    return off && std::string_view(off) == "off" ? nullptr : new KernelIndex(default_dir());
  }();
  return index;
}

std::filesystem::path KernelIndex::kernel_dir(std::string_view source, std::string_view name) const {
  return dir_ / ("v" + std::to_string(kFormat)) /
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
  try {
    if (j.at("source").get<std::string>() != source || j.at("name").get<std::string>() != name) {
      why = "its index entry is another kernel's";  // a 128-bit prefix collision
      return std::nullopt;
    }
    for (const auto& file : j.at("files")) {
      const auto path = file.at("path").get<std::string>();
      const auto bytes = read_file(path);
      if (!bytes) {
        why = "'" + path + "', which it was compiled from, is gone";
        return std::nullopt;
      }
      if (sha256_hex(*bytes) != file.at("sha256").get<std::string>()) {
        why = "'" + path + "' changed since it was compiled";
        return std::nullopt;
      }
    }
    const auto now = compile_environment();
    const auto then = j.at("environment").get<std::map<std::string, std::string>>();
    if (now != then) {
      for (const auto& [variable, value] : now) {
        if (!then.contains(variable) || then.at(variable) != value)
          why = "the environment variable " + variable + " changed";
      }
      for (const auto& [variable, value] : then) {
        if (!now.contains(variable)) why = "the environment variable " + variable + " was unset";
      }
      return std::nullopt;
    }
    IndexedKernel kernel{j.at("description").get<std::string>(),
                         j.at("rules").get<std::string>(),
                         j.at("fingerprint").get<std::string>(),
                         {}};
    for (const auto& file : j.at("files")) {
      kernel.files.emplace_back(file.at("path").get<std::string>(), file.at("sha256").get<std::string>());
    }
    return kernel;
  } catch (const nlohmann::json::exception&) {
    why = "its index entry lacks a field this tritonrt reads";
    return std::nullopt;
  }
}

std::string KernelIndex::put_kernel(std::string_view source, std::string_view name, const IndexedKernel& kernel,
                                    const std::vector<std::string>& files) const {
  nlohmann::json j = {{"source", source},
                      {"name", name},
                      {"description", kernel.description},
                      {"rules", kernel.rules},
                      {"environment", compile_environment()}};
  j["files"] = nlohmann::json::array();
  for (const auto& path : files) {
    const auto bytes = read_file(path);
    if (!bytes) return "";  // a file that cannot be read back cannot be checked: leave it unindexed
    j["files"].push_back({{"path", path}, {"sha256", sha256_hex(*bytes)}});
  }
  j["fingerprint"] = sha256_hex(dump_json(j));
  const std::string fingerprint = j["fingerprint"].get<std::string>();
  write_atomically(kernel_dir(source, name) / "kernel", record("kernel", dump_json(j), ""));
  remove_stale(kernel_dir(source, name), fingerprint);
  return fingerprint;
}

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
      // Records of earlier sources: no process finds them any more.
      const auto bytes = read_file(path);
      const auto parsed = bytes ? parse_record(extension.substr(1), *bytes) : std::variant<Record, std::string>("");
      const auto* found = std::get_if<Record>(&parsed);
      stale = found != nullptr && found->json.contains("key") && found->json["key"].is_string() &&
              !found->json["key"].get<std::string>().starts_with(fingerprint + "|");
    }
    if (stale) std::filesystem::remove(path, local);
  }
}

std::optional<Artifact> KernelIndex::find_artifact(std::string_view source, std::string_view name,
                                                   const std::string& key, const Target& target) const {
  const auto path = keyed_file(source, name, key, ".artifact");
  std::string why;
  auto record = load(path, "artifact", name, why);
  if (!record) return std::nullopt;
  Artifact artifact;
  std::optional<std::string> problem;
  try {
    if (record->json.at("key").get<std::string>() != key) return std::nullopt;  // a prefix collision
    artifact.binary_kind = record->json.at("binary_kind").get<std::string>();
    artifact.metadata = KernelMetadata::parse(record->json.at("metadata").get<std::string>());
    artifact.binary = std::move(record->binary);
    artifact.cache_dir = path.parent_path().string();
    problem = artifact_problem(artifact, target);
  } catch (const nlohmann::json::exception&) {
    problem = "it lacks a field this tritonrt reads";
  } catch (const Error& e) {
    problem = e.what();
  }
  if (!problem) return artifact;
  set_aside_invalid(path, name, "its index file " + path.string() + " is invalid (" + *problem + ")");
  return std::nullopt;
}

void KernelIndex::put_artifact(std::string_view source, std::string_view name, const std::string& key,
                               const Artifact& artifact) const {
  const nlohmann::json j = {{"key", key}, {"binary_kind", artifact.binary_kind}, {"metadata", artifact.metadata.json}};
  write_atomically(keyed_file(source, name, key, ".artifact"), record("artifact", dump_json(j), artifact.binary));
}

std::optional<std::pair<std::size_t, std::string>> KernelIndex::find_choice(std::string_view source,
                                                                            std::string_view name,
                                                                            const std::string& key) const {
  const auto path = keyed_file(source, name, key, ".choice");
  std::string why;
  const auto record = load(path, "choice", name, why);
  if (!record) return std::nullopt;
  try {
    if (record->json.at("key").get<std::string>() != key) return std::nullopt;  // a prefix collision
    return std::make_pair(record->json.at("config").get<std::size_t>(), record->json.at("text").get<std::string>());
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

void KernelIndex::put_choice(std::string_view source, std::string_view name, const std::string& key, std::size_t config,
                             const std::string& config_text) const {
  const nlohmann::json j = {{"key", key}, {"config", config}, {"text", config_text}};
  write_atomically(keyed_file(source, name, key, ".choice"), record("choice", dump_json(j), ""));
}

std::vector<std::string> KernelIndex::find_heuristic(std::string_view source, std::string_view name,
                                                     const std::string& key) const {
  std::string why;
  const auto record = load(keyed_file(source, name, key, ".heuristic"), "heuristic", name, why);
  std::vector<std::string> out;
  if (!record) return out;
  try {
    if (record->json.at("key").get<std::string>() != key) return out;  // a prefix collision
    for (const auto& entry : record->json.at("entries")) out.push_back(entry.get<std::string>());
  } catch (const nlohmann::json::exception&) {
    out.clear();
  }
  return out;
}

void KernelIndex::put_heuristic(std::string_view source, std::string_view name, const std::string& key,
                                const std::string& entry) const {
  // Read, add, write whole: two processes adding at once may lose one entry, which only
  // means that input runs in Python once more.
  auto entries = find_heuristic(source, name, key);
  if (entries.size() >= kMaxHeuristicEntries || std::find(entries.begin(), entries.end(), entry) != entries.end()) {
    return;
  }
  entries.push_back(entry);
  const nlohmann::json j = {{"key", key}, {"entries", entries}};
  write_atomically(keyed_file(source, name, key, ".heuristic"), record("heuristic", dump_json(j), ""));
}

std::vector<IndexListing> KernelIndex::list(std::vector<std::string>& skipped) const {
  std::vector<IndexListing> out;
  std::error_code ec;
  std::vector<std::filesystem::path> kernels;
  // increment(ec), not ++: a folder removed meanwhile ends the listing, it does not throw.
  for (auto it = std::filesystem::directory_iterator(dir_ / ("v" + std::to_string(kFormat)), ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec)) kernels.push_back(it->path());
  }
  std::sort(kernels.begin(), kernels.end());  // the same index lists the same way every time
  for (const auto& kernel_dir : kernels) {
    std::string why;
    const auto record = load(kernel_dir / "kernel", "kernel", "index", why);
    if (!record) {
      if (std::filesystem::exists(kernel_dir / "kernel", ec)) skipped.push_back(kernel_dir.string() + ": " + why);
      continue;
    }
    IndexListing listing;
    try {
      listing.source = record->json.at("source").get<std::string>();
      listing.name = record->json.at("name").get<std::string>();
    } catch (const nlohmann::json::exception&) {
      skipped.push_back(kernel_dir.string() + ": its kernel record lacks a field this tritonrt reads");
      continue;
    }
    auto kernel = find_kernel(listing.source, listing.name, why);
    if (!kernel) {
      skipped.push_back(listing.name + " of " + listing.source + ": " + why);
      continue;
    }
    listing.kernel = std::move(*kernel);
    const std::string prefix = listing.kernel.fingerprint + "|";
    std::vector<std::filesystem::path> files;
    for (auto it = std::filesystem::directory_iterator(kernel_dir, ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
      files.push_back(it->path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& path : files) {
      const auto extension = path.extension().string();
      if (extension != ".artifact" && extension != ".choice" && extension != ".heuristic") continue;
      const auto found = load(path, extension.substr(1), listing.name, why);
      if (!found) continue;
      try {
        const auto key = found->json.at("key").get<std::string>();
        if (!key.starts_with(prefix)) continue;  // compiled from earlier sources
        if (extension == ".heuristic") {
          listing.heuristics.emplace_back(key.substr(prefix.size()),
                                          found->json.at("entries").get<std::vector<std::string>>());
          continue;
        }
        if (extension == ".choice") {
          listing.choices.push_back({key.substr(prefix.size()), found->json.at("config").get<std::size_t>(),
                                     found->json.at("text").get<std::string>()});
          continue;
        }
        const Target target = Target::parse(key.substr(prefix.size(), key.find('|', prefix.size()) - prefix.size()));
        if (auto artifact = find_artifact(listing.source, listing.name, key, target)) {
          listing.artifacts.emplace_back(key.substr(prefix.size()), std::move(*artifact));
        }
      } catch (const nlohmann::json::exception&) {
        continue;  // a record of an older layout: not listed
      } catch (const Error&) {
        continue;  // a key whose target this tritonrt does not read
      }
    }
    out.push_back(std::move(listing));
  }
  return out;
}

}  // namespace tritonrt::detail

#include "store/index_inputs.h"

#include <sys/stat.h>

#include <algorithm>
#include <compare>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <system_error>
#include <utility>

#include "common/errors.h"
#include "common/sha256.h"
#include "store/files.h"
#include "store/module_search.h"

namespace tritonrt::detail {
namespace {

// A file's or folder's stamps, as the bridge takes them (bridge/observe.py): a change of
// content changes its ctime, which no one can set back.
struct Stamp {
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0, ctime_ns = 0;
  std::uint64_t inode = 0;
  friend bool operator==(const Stamp&, const Stamp&) = default;
  friend auto operator<=>(const Stamp&, const Stamp&) = default;
};

std::optional<Stamp> stamp_of(const std::string& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return std::nullopt;
  const auto ns = [](const timespec& t) { return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; };
  return Stamp{static_cast<std::uint64_t>(status.st_size), ns(status.st_mtim), ns(status.st_ctim),
               static_cast<std::uint64_t>(status.st_ino)};
}

// The SHA-256 of a folder's listing as the bridge makes it: its names, sorted, one per line.
std::optional<std::string> listing_sha256(const std::string& path) {
  std::error_code ec;
  std::vector<std::string> names;
  for (auto it = std::filesystem::directory_iterator(path, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  if (ec) return std::nullopt;
  std::sort(names.begin(), names.end());
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : "\n") + n;
  return sha256_hex(joined);
}

// Why an input a record names is not as it was ("" when it is): its stamps equal, else its
// content hashed (once per process for each path and stamps).
std::string input_changed(const std::string& path, bool folder, const std::string& sha256, const Stamp& recorded) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, Stamp>, std::string> hashed;
  const auto now = stamp_of(path);
  if (!now) return "'" + path + "', which it was made from, is gone";
  if (*now == recorded) return "";
  std::string digest;
  {
    std::lock_guard lock(mutex);
    if (const auto it = hashed.find({path, *now}); it != hashed.end()) digest = it->second;
  }
  if (digest.empty()) {
    std::string unreadable;
    if (folder) {
      digest = listing_sha256(path).value_or("");
      if (digest.empty()) return "'" + path + "', which it was made from, cannot be listed";
    } else {
      const auto bytes = read_file(path, kMaxTextBytes, unreadable);
      if (!bytes) return "'" + path + "', which it was made from, " + unreadable;
      digest = sha256_hex(*bytes);
    }
    std::lock_guard lock(mutex);
    hashed.emplace(std::make_pair(path, *now), digest);
  }
  if (digest != sha256) return "'" + path + "' changed since it was compiled";
  return "";
}

}  // namespace

Environment environment_from(const JsonReader<ArtifactError>& read, const nlohmann::json& object) {
  if (!object.is_object()) read.fail("field 'environment' should be an object");
  Environment out;
  for (const auto& [variable, value] : object.items()) {
    out.emplace(variable, value.is_null() ? std::nullopt : std::optional(read.as<std::string>(value, "environment")));
  }
  return out;
}

nlohmann::json environment_json(const Environment& environment) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [variable, value] : environment) out[variable] = value ? nlohmann::json(*value) : nullptr;
  return out;
}

nlohmann::json inputs_of_files(const std::vector<std::string>& paths) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& path : paths) {
    std::string why;
    const auto stamp = stamp_of(path);
    const auto bytes = read_file(path, kMaxTextBytes, why);
    if (!stamp || !bytes) raise<ArtifactError>({}, "cannot record '{}': {}", path, why.empty() ? "gone" : why);
    files.push_back({{"path", path},
                     {"kind", "file"},
                     {"sha256", sha256_hex(*bytes)},
                     {"size", stamp->size},
                     {"mtime_ns", stamp->mtime_ns},
                     {"ctime_ns", stamp->ctime_ns},
                     {"inode", stamp->inode}});
  }
  return {{"files", files}, {"modules", nlohmann::json::array()}, {"environment", nlohmann::json::object()}};
}

std::string inputs_changed(const JsonReader<ArtifactError>& read, const nlohmann::json& record,
                           std::string_view source) {
  for (const auto& file : read.field<nlohmann::json>(record, "files")) {
    const Stamp stamp{read.field<std::uint64_t>(file, "size"), read.field<std::int64_t>(file, "mtime_ns"),
                      read.field<std::int64_t>(file, "ctime_ns"), read.field<std::uint64_t>(file, "inode")};
    std::string why =
        input_changed(read.field<std::string>(file, "path"), read.field<std::string>(file, "kind") == "folder",
                      read.field<std::string>(file, "sha256"), stamp);
    if (!why.empty()) return why;
  }
  const auto modules = read.field<nlohmann::json>(record, "modules");
  if (!modules.is_array()) read.fail("field 'modules' should be a list");
  for (const auto& module : modules) {
    const auto dotted = read.field<std::string>(module, "name");
    const auto file = read.field<std::string>(module, "file");
    const auto folders = read.field<nlohmann::json>(module, "search_path");
    if (!folders.is_array()) read.fail("field 'search_path' should be a list");
    std::vector<std::string> search_path;
    for (const auto& folder : folders) search_path.push_back(read.as<std::string>(folder, "search_path"));
    const auto found = find_module_file(dotted, search_path);
    std::error_code ec;
    if (!found || std::filesystem::weakly_canonical(*found, ec) != file) {
      return "module '" + dotted + "' would now be imported from " + (found ? "'" + *found + "'" : "no file") +
             ", not from '" + file + "'";
    }
  }
  const Environment then = environment_from(read, read.field<nlohmann::json>(record, "environment"));
  if (const std::string changed = changed_variable(then, source); !changed.empty()) {
    return "the environment variable " + changed;
  }
  return "";
}

}  // namespace tritonrt::detail

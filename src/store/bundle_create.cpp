// Writing bundles (include/tritonrt/bundle.h): what tritonrt's index holds, filtered, packed
// into one file (store/bundle.h has its format).

#include <algorithm>
#include <map>
#include <set>

#include "common/errors.h"
#include "common/json.h"
#include "common/record_key.h"
#include "common/sha256.h"
#include "store/bundle.h"
#include "store/files.h"
#include "store/index.h"
#include "store/kernel_names.h"
#include "tritonrt/bundle.h"
#include "tritonrt/version.h"

namespace tritonrt {
namespace {

// Whether the filter takes the kernel: all, or those an entry names.
bool wanted_kernel(const BundleFilter& filter, const std::string& kernel_source, const std::string& kernel_name) {
  return filter.kernels.empty() ||
         std::any_of(filter.kernels.begin(), filter.kernels.end(), [&](const std::string& wanted) {
           return detail::names_kernel(wanted, kernel_source, kernel_name);
         });
}

// What is said about the kernels left out: with a kernel filter, only those it names (a
// record too damaged to name its kernel is about no kernel asked for).
std::vector<std::string> skipped_lines(const BundleFilter& filter, const std::vector<detail::SkippedKernel>& skipped) {
  std::vector<std::string> lines;
  for (const auto& s : skipped) {
    const bool named = !s.name.empty();
    if (filter.kernels.empty() || (named && wanted_kernel(filter, s.source, s.name))) lines.push_back(s.line);
  }
  return lines;
}

// Whether the record filed under `key` (an artifact, choice or heuristic value) is for a
// target the filter takes.
bool wanted_target(const BundleFilter& filter, std::string_view key) {
  const auto parsed = detail::RecordKey::parse(key);
  return filter.targets.empty() || (parsed && std::any_of(filter.targets.begin(), filter.targets.end(),
                                                          [&](const Target& t) { return t.str() == parsed->target; }));
}

// The data and table being written: per kernel its binaries, then its entry, in the data,
// and its line in the table.
class BundleWriter {
 public:
  explicit BundleWriter(const BundleFilter& filter) : filter_(filter) {}

  /// Adds what `listing` holds that the filter takes; nothing when none of its artifacts is.
  void add(const detail::IndexListing& listing) {
    const std::size_t start = data_.size();
    std::set<std::string> targets;
    nlohmann::json held = nlohmann::json::array();
    nlohmann::json artifacts = this->artifacts(listing, targets, held);
    if (artifacts.empty()) return;  // nothing of it runs
    const std::string identity = detail::bundle_identity(listing.source, listing.name);
    if (const auto [it, added] = sources_.emplace(identity, listing.source); !added) {
      detail::raise<ArtifactError>({listing.name},
                                   "cannot be bundled twice under one identity {}: from {} and from {} (choose one "
                                   "with a kernel filter)",
                                   identity, it->second, listing.source);
    }
    // Choices and heuristics' values are what runs on some device recorded: a bundle of
    // named artifacts (keys) holds those artifacts only.
    const bool exact = !filter_.artifacts.empty();
    nlohmann::json choices = nlohmann::json::array();
    for (const auto& c : listing.choices) {
      if (!exact && wanted_target(filter_, c.key))
        choices.push_back({{"key", c.key}, {"config", c.config}, {"text", c.text}});
    }
    nlohmann::json heuristics = nlohmann::json::object();  // heuristics' values and config hooks' effects
    std::size_t heuristic_values = 0, hook_effects = 0;
    for (const auto& [key, entries] : listing.heuristics) {
      if (exact || !wanted_target(filter_, key)) continue;
      heuristics[key] = entries;
      const auto parsed = detail::RecordKey::parse(key);
      (parsed && parsed->kind == detail::RecordKey::Kind::hook ? hook_effects : heuristic_values) += entries.size();
    }
    const std::size_t binary_bytes = data_.size() - start;
    const std::string entry = detail::dump_json({{"description", listing.kernel.description},
                                                 {"rules", listing.kernel.rules},
                                                 {"files", listing.kernel.files},
                                                 {"artifacts", artifacts},
                                                 {"choices", choices},
                                                 {"heuristics", heuristics}});
    table_.push_back({{"identity", identity},
                      {"source", listing.source},
                      {"name", listing.name},
                      {"targets", targets},
                      {"artifacts", artifacts.size()},
                      {"held", held},
                      {"choices", choices.size()},
                      {"heuristic_values", heuristic_values},
                      {"hook_effects", hook_effects},
                      {"bytes", binary_bytes},
                      {"entry", {data_.size(), entry.size(), detail::sha256_hex(entry)}}});
    data_ += entry;
  }

  bool empty() const { return table_.empty(); }

  /// The whole file: header, table, data.
  std::string file() const {
    const std::string text = detail::dump_json({{"created_by", TRITONRT_VERSION}, {"kernels", table_}});
    std::string out = std::string(detail::kBundleMagic) + " " + std::to_string(detail::kBundleFormat) + " " +
                      std::to_string(text.size()) + " " + detail::sha256_hex(text) + "\n";
    out.reserve(out.size() + text.size() + data_.size());
    out += text;
    out += data_;
    return out;
  }

 private:
  // The artifacts of `listing` the filter takes, their binaries appended to the data; each one's
  // key and hash in `held`, for the table.
  nlohmann::json artifacts(const detail::IndexListing& listing, std::set<std::string>& targets,
                           nlohmann::json& held) {
    nlohmann::json out = nlohmann::json::array();
    std::vector<const std::pair<std::string, Artifact>*> by_key;  // listed in the order of their keys
    for (const auto& a : listing.artifacts) by_key.push_back(&a);
    std::sort(by_key.begin(), by_key.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
    for (const auto* listed : by_key) {
      const std::string& key = listed->first;  // not a structured binding: lambdas capture it (clang 14)
      const Artifact& artifact = listed->second;
      if (!wanted_target(filter_, key)) continue;
      const auto& hashes = filter_.hashes;
      if (!hashes.empty() && std::find(hashes.begin(), hashes.end(), artifact.metadata.hash) == hashes.end()) continue;
      const auto& named = filter_.artifacts;
      if (!named.empty() && std::none_of(named.begin(), named.end(), [&](const auto& a) {
            return a.second == key && detail::names_kernel(a.first, listing.source, listing.name);
          })) {
        continue;
      }
      held.push_back({{"key", key}, {"hash", artifact.metadata.hash}});
      out.push_back({{"key", key},
                     {"binary_kind", artifact.binary_kind},
                     {"metadata", artifact.metadata.json},
                     {"offset", data_.size()},
                     {"size", artifact.binary.size()},
                     {"sha256", detail::sha256_hex(artifact.binary)}});
      targets.insert(artifact.metadata.target.str());
      data_ += artifact.binary;
    }
    return out;
  }

  const BundleFilter& filter_;
  nlohmann::json table_ = nlohmann::json::array();
  std::string data_;
  std::map<std::string, std::string> sources_;  // identity -> source, to catch two kernels sharing one
};

}  // namespace

BundleInfo create_bundle(const std::filesystem::path& out, const BundleFilter& filter) {
  if (const std::string problem = detail::output_problem(out); !problem.empty()) {
    detail::raise<ArtifactError>({}, "cannot create the bundle {}: {}", out.string(), problem);
  }
  const detail::KernelIndex* index = detail::KernelIndex::get();
  if (index == nullptr) detail::raise<ArtifactError>({}, "cannot create a bundle: the index is off");
  std::vector<detail::SkippedKernel> skipped_kernels;
  auto listings = index->list(skipped_kernels);
  std::vector<std::string> skipped = skipped_lines(filter, skipped_kernels);
  // Kernels in identity order, so that a bundle lists the same way wherever it was made.
  std::sort(listings.begin(), listings.end(), [](const auto& a, const auto& b) {
    return detail::bundle_identity(a.source, a.name) < detail::bundle_identity(b.source, b.name);
  });
  BundleWriter writer(filter);
  for (const auto& listing : listings) {
    if (wanted_kernel(filter, listing.source, listing.name)) writer.add(listing);
  }
  if (writer.empty()) {
    // Here every record left out may be the reason, a damaged one that names no kernel too.
    std::string why = "nothing in the index " + index->dir().string() + " matches";
    for (const auto& s : skipped_kernels) why += "\n  skipped " + s.line;
    detail::raise<ArtifactError>({}, "cannot create the bundle {}: {}", out.string(), why);
  }
  if (const std::string why = detail::write_whole_file(out, writer.file()); !why.empty()) {
    detail::raise<ArtifactError>({}, "cannot create the bundle {}: {}", out.string(), why);
  }
  BundleInfo info = read_bundle(out, BundleCheck::everything);  // what was written reads back whole
  info.skipped = std::move(skipped);
  return info;
}

}  // namespace tritonrt

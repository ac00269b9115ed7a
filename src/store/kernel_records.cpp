#include "store/kernel_records.h"

#include <atomic>
#include <cstdint>

#include "common/errors.h"
#include "common/log.h"
#include "common/record_key.h"
#include "store/bundle.h"
#include "store/index.h"

namespace tritonrt::detail {
namespace {

// A loaded bundle's entry: read-only, every lookup in its maps.
class BundleRecords final : public KernelRecords {
 public:
  explicit BundleRecords(const MappedKernel& kernel) : kernel_(kernel) {}

  std::string where() const override { return "the bundle " + kernel_.where(); }
  bool read_only() const override { return true; }
  bool follows_sources() const override { return false; }

  std::optional<Artifact> find_artifact(const std::string& key, const Target& target) const override {
    return bundled_artifact(kernel_, key, target);
  }
  std::string lacks_artifact(const std::string& key) const override {
    return where() + " holds no artifact for this call (" + artifact_words(key) +
           "); it holds for this kernel: " + kernel_.artifact_list();
  }
  void put_artifact(const std::string&, const Artifact&) const override {}

  std::optional<std::pair<std::size_t, std::string>> find_choice(const std::string& key) const override {
    const auto it = kernel_.choices.find(key);
    if (it == kernel_.choices.end()) return std::nullopt;
    return it->second;
  }
  void put_choice(const std::string&, std::size_t, const std::string&) const override {}

  std::vector<std::string> find_memo_entries(const std::string& key) const override {
    const auto it = kernel_.heuristics.find(key);
    return it != kernel_.heuristics.end() ? it->second : std::vector<std::string>{};
  }
  bool put_memo_entry(const std::string&, const std::string&) const override { return false; }

 private:
  const MappedKernel& kernel_;  // lives as long as the process (find_bundled)
};

// The index's record of the kernel, named by its fingerprint: every key is filed behind it,
// so what was filed for other sources is never found.
class IndexRecords final : public KernelRecords {
 public:
  // `read_back`: the description was read from the index (Python may import the kernel later).
  IndexRecords(const KernelIndex& index, std::string_view source, std::string_view name, std::string fingerprint,
               bool read_back)
      : index_(index),
        source_(source),
        name_(name),
        fingerprint_(std::move(fingerprint)),
        state_(read_back ? State::unchecked : State::same) {}

  std::string where() const override { return "the index"; }
  bool read_only() const override { return false; }
  bool follows_sources() const override { return true; }

  std::optional<Artifact> find_artifact(const std::string& key, const Target& target) const override {
    return index_.find_artifact(source_, name_, fingerprinted(fingerprint_, key), target);
  }
  std::string lacks_artifact(const std::string& key) const override {
    return "tritonrt's index holds no artifact for this call (" + artifact_words(key) + ")";
  }
  void put_artifact(const std::string& key, const Artifact& artifact) const override {
    index_.put_artifact(source_, name_, fingerprinted(fingerprint_, key), artifact);
  }

  std::optional<std::pair<std::size_t, std::string>> find_choice(const std::string& key) const override {
    return index_.find_choice(source_, name_, fingerprinted(fingerprint_, key));
  }
  void put_choice(const std::string& key, std::size_t config, const std::string& text) const override {
    index_.put_choice(source_, name_, fingerprinted(fingerprint_, key), config, text);
  }

  std::vector<std::string> find_memo_entries(const std::string& key) const override {
    return index_.find_heuristic(source_, name_, fingerprinted(fingerprint_, key));
  }
  bool put_memo_entry(const std::string& key, const std::string& entry) const override {
    return index_.put_heuristic(source_, name_, fingerprinted(fingerprint_, key), entry);
  }

  bool usable(bool imported_since, const std::function<std::optional<std::string>()>& differs) const override {
    if (!imported_since) return true;
    State state = state_.load();
    if (state == State::unchecked) {
      auto why = differs();
      if (!why) why = record_replaced();
      if (state_.compare_exchange_strong(state, why ? State::changed : State::same) && why) {
        log_about(LogLevel::warning, {name_},
                  "changed since this process read it from the index ({}): what Python compiles from its files as "
                  "they are now is not recorded there",
                  *why);
      }
      state = state_.load();
    }
    return state != State::changed;
  }

 private:
  // Read from the index, the code Python imported since not compared with it yet; compared:
  // the recorded code, or not. A kernel filed when Python described it is `same`.
  enum class State : std::uint8_t { unchecked, same, changed };

  // Why the index's record of the kernel is no longer the one read, or nullopt.
  std::optional<std::string> record_replaced() const {
    std::string why;
    const auto found = index_.find_kernel(source_, name_, why);
    if (!found) return why;
    if (found->fingerprint != fingerprint_) return "its record was replaced";
    return std::nullopt;
  }

  const KernelIndex& index_;  // the process's (KernelIndex::get)
  std::string source_, name_, fingerprint_;
  mutable std::atomic<State> state_;
};

}  // namespace

std::optional<StoredKernel> find_stored_kernel(
    std::string_view source, std::string_view name, std::string& why,
    const std::function<std::optional<std::string>(const StoredKernel&)>& accept) {
  why = "no bundle is loaded";
  if (const MappedKernel* bundled = find_bundled(source, name, why)) {
    StoredKernel kernel{bundled->description, bundled->rules, std::make_shared<BundleRecords>(*bundled)};
    if (const auto refused = accept(kernel)) {
      raise<ArtifactError>({name}, "the bundle {} cannot serve it: {}", bundled->where(), *refused);
    }
    return kernel;
  }
  const KernelIndex* index = KernelIndex::get();
  if (index == nullptr) {
    why += "; the index is off";
    return std::nullopt;
  }
  std::string index_why;
  if (auto found = index->find_kernel(source, name, index_why)) {
    StoredKernel kernel{std::move(found->description), std::move(found->rules),
                        std::make_shared<IndexRecords>(*index, source, name, std::move(found->fingerprint), true)};
    const auto refused = accept(kernel);
    if (!refused) return kernel;
    index_why = *refused;
  }
  why += "; tritonrt's index cannot serve it: " + index_why;
  return std::nullopt;
}

std::shared_ptr<KernelRecords> file_kernel(std::string_view source, std::string_view name,
                                           const std::string& description, const std::string& rules,
                                           const nlohmann::json& inputs) {
  const KernelIndex* index = KernelIndex::get();
  if (index == nullptr) return nullptr;
  std::string fingerprint = index->put_kernel(source, name, {description, rules, "", {}}, inputs);
  if (fingerprint.empty()) return nullptr;
  return std::make_shared<IndexRecords>(*index, source, name, std::move(fingerprint), false);
}

bool index_enabled() { return KernelIndex::get() != nullptr; }

}  // namespace tritonrt::detail

// Where a kernel's records are kept outside Python, behind one interface: the stores are
// consulted in one order (embedded bundles and bundle files, then tritonrt's index), the first
// that holds a kernel serves its description and, from then on, everything filed for it
// (artifacts, autotuners' choices, memo entries of heuristics and config hooks). A kernel no
// store holds is described through Python and filed in the index.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tritonrt/artifact.h"

namespace tritonrt::detail {

/// One kernel's records in one store. Keys are the call path's (record_key.h); a store files
/// them under its own names (the index prefixes its record's fingerprint).
class KernelRecords {
 public:
  virtual ~KernelRecords() = default;

  /// The store, for messages: "the bundle <path>" or "the index".
  virtual std::string where() const = 0;
  /// A bundle: what it lacks is compiled only with the Triton that made it and is not filed.
  virtual bool read_only() const = 0;
  /// The index: the records stand for the kernel's files here, so they hold only while its module
  /// is imported from the file recorded, and Python importing it later is checked (`usable`). A
  /// bundle serves without its sources.
  virtual bool follows_sources() const = 0;

  /// The artifact filed under `key`, checked against `target`; nullopt where there is none.
  /// A damaged one is an ArtifactError (a bundle) or set aside and reported (the index).
  virtual std::optional<Artifact> find_artifact(const std::string& key, const Target& target) const = 0;
  /// Why no artifact served `key`, for the message of a failed compile.
  virtual std::string lacks_artifact(const std::string& key) const = 0;
  virtual void put_artifact(const std::string& key, const Artifact& artifact) const = 0;

  /// An autotuner's choice filed under `key`: the config's index and its text as Triton prints it.
  virtual std::optional<std::pair<std::size_t, std::string>> find_choice(const std::string& key) const = 0;
  virtual void put_choice(const std::string& key, std::size_t config, const std::string& text) const = 0;

  /// Memo entries filed under `key` (JSON texts, src/function/memo.h).
  virtual std::vector<std::string> find_memo_entries(const std::string& key) const = 0;
  /// Files one more; false where no more are filed under `key` (a bundle files none).
  virtual bool put_memo_entry(const std::string& key, const std::string& entry) const = 0;

  /// Whether the records may still be used: false, once and for all, where Python imported the
  /// kernel after its description was read from here (`imported_since`) and `differs` (asked
  /// once, with the code Python holds) or the store's own record say it is not the code
  /// recorded (then warned once). Until asked, nothing more is read or filed.
  virtual bool usable(bool imported_since, const std::function<std::optional<std::string>()>& differs) const {
    (void)imported_since, (void)differs;
    return true;
  }
};

/// A kernel as a store holds it: the bridge's description and the specialization rules it was
/// described with (JSON texts, as written), and its records there.
struct StoredKernel {
  std::string description, rules;
  std::shared_ptr<KernelRecords> records;
};

/// Kernel `name` of `source` from the first store that holds it fresh, if `accept` takes its
/// entry (it returns why not, e.g. a description that does not parse). A bundle's entry refused,
/// or a damaged bundle, is an ArtifactError; an index record refused is as none, its reason in
/// `why`. nullopt with `why` saying what each store lacked.
std::optional<StoredKernel> find_stored_kernel(
    std::string_view source, std::string_view name, std::string& why,
    const std::function<std::optional<std::string>(const StoredKernel&)>& accept);

/// Files a kernel just described through Python in the index: `inputs` is what it was made
/// from (KernelIndex::put_kernel). Its records there, or nullptr where the index is off or
/// could not file it.
std::shared_ptr<KernelRecords> file_kernel(std::string_view source, std::string_view name,
                                           const std::string& description, const std::string& rules,
                                           const nlohmann::json& inputs);

/// Whether tritonrt's index is on in this process (TRITONRT_INDEX).
bool index_enabled();

}  // namespace tritonrt::detail

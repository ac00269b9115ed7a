// What Python code around a kernel (a heuristic, a config's pre_hook) read of a call, kept with
// its answer so that a later call that would read the same is answered in C++ (MemoEntry,
// decorators.h); and the entries' stored form, which tritonrt's index and bundles carry to
// other processes: {"reads": [[param, facet, arg, dims]], ...}, an arg [kind, value bits or
// text, dtype, stored, source].
#pragma once

#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/json.h"
#include "function/decorators.h"

namespace tritonrt::detail {

using MemoReader = JsonReader<ArtifactError>;

/// Whether what `entry` read is what a call of `args` on `device` would read now.
bool still_reads(const MemoEntry& entry, const Arg* args, const DeviceContext* device);

/// `entry`'s reads of `r`'s arguments: each (parameter, facet) with what it found now.
void record_reads(MemoEntry& entry, const std::vector<std::pair<std::size_t, Facet>>& reads, const Resolution& r,
                  const std::vector<TensorShape>& shapes);

/// `entry`'s stored form: its reads and, under `field`, its answer (a heuristic's "value", a
/// hook's "changes"), as JSON text; nullopt where a read holds only in this process (an
/// address, a Python default) or a string is not UTF-8.
std::optional<std::string> stored_text(const MemoEntry& entry, const char* field, nlohmann::json answer);
/// The JSON form of `a`, or nullopt for a value that lives in this process only (an address,
/// where `keep_address`: a pointer read for its dtype or shape keeps none).
std::optional<nlohmann::json> stored_arg(const Arg& a, bool keep_address);

/// Reads stored by stored_text back into `entry`, for a kernel of `params` parameters; throws
/// ArtifactError on anything malformed or out of range.
void reads_from_stored(const MemoReader& read, const nlohmann::json& reads, std::size_t params, MemoEntry& entry);
/// An arg stored by stored_arg (strings kept in `strings`); a pointer only where
/// `pointer_allowed`. Throws ArtifactError.
Arg arg_from_stored(const MemoReader& read, const nlohmann::json& j, std::deque<std::string>& strings,
                    bool pointer_allowed);

/// An entry back from stored_text's form, for a kernel of `params` parameters (`document` names
/// it in errors); `read_answer(read, answer, entry)` reads `field` into it. nullptr when it does
/// not read back.
template <class ReadAnswer>
std::unique_ptr<MemoEntry> from_stored_text(const std::string& text, std::size_t params, const char* document,
                                            const char* field, ReadAnswer&& read_answer) {
  auto entry = std::make_unique<MemoEntry>();
  const MemoReader read({}, document);
  try {
    const auto j = read.parse(text);
    reads_from_stored(read, read.field<nlohmann::json>(j, "reads"), params, *entry);
    read_answer(read, read.field<nlohmann::json>(j, field), *entry);
  } catch (const Error&) {
    return nullptr;
  }
  return entry;
}

/// The entries a memo's key holds in the index or a bundle (`texts`), those that read back
/// (`parse` reads one into an entry, nullptr when it does not), added to `memo`; then the
/// entry for `r`'s call, or nullptr. Where MemoTable::look_at_stored says so.
template <class Parse>
const MemoEntry* add_stored(MemoTable& memo, const std::vector<std::string>& texts, const Resolution& r,
                            Parse&& parse) {
  if (texts.empty()) return nullptr;
  {
    std::lock_guard lock(r.state.mutex);
    for (const auto& text : texts) {
      if (!memo.new_stored(text)) continue;  // added at an earlier look
      if (auto entry = parse(text)) memo.add(std::move(entry));
    }
  }
  return memo.find(r.args, r.device);
}

}  // namespace tritonrt::detail

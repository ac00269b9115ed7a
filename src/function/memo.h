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

/// The stored form of `entry`'s reads, or nullopt where one of them holds only in this process
/// (an address, a Python default).
std::optional<nlohmann::json> stored_reads(const MemoEntry& entry);
/// The JSON form of `a`, or nullopt for a value that lives in this process only (an address,
/// where `keep_address`: a pointer read for its dtype or shape keeps none).
std::optional<nlohmann::json> stored_arg(const Arg& a, bool keep_address);

/// Reads stored by stored_reads back into `entry`, for a kernel of `params` parameters; throws
/// ArtifactError on anything malformed or out of range.
void reads_from_stored(const MemoReader& read, const nlohmann::json& reads, std::size_t params, MemoEntry& entry);
/// An arg stored by stored_arg (strings kept in `strings`); a pointer only where
/// `pointer_allowed`. Throws ArtifactError.
Arg arg_from_stored(const MemoReader& read, const nlohmann::json& j, std::deque<std::string>& strings,
                    bool pointer_allowed);

/// The entries recorded under `key` (the index's or a bundle's), those that read back.
/// `parse` reads one stored text into an entry (nullptr when it does not read back).
template <class Parse>
std::unique_ptr<MemoEntry> first_stored_match(const std::vector<std::string>& texts, const Resolution& r,
                                              Parse&& parse) {
  for (const auto& text : texts) {
    auto stored = parse(text);
    if (stored && still_reads(*stored, r.args, r.device)) return stored;
  }
  return nullptr;
}

}  // namespace tritonrt::detail

// The keys tritonrt's index and bundles file records under, composed and read here only:
//   an artifact         "<target>|<options>|<specialization>"
//   a tuning choice     "autotune <layer>|<target>|<tuning key>"
//   a heuristic's value "heuristic <n>|<target>|<SMs> SMs"
//   a config hook's effect "hook <layer>|<target>|config <c> <config id>, <SMs> SMs"
// The index puts the fingerprint of the kernel's record in front: "<fingerprint>|<key>".
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tritonrt::detail {

struct RecordKey {
  enum class Kind { artifact, choice, heuristic, hook };
  Kind kind = Kind::artifact;
  std::size_t decorator = 0;  ///< the autotune layer, or the heuristic's number over all layers
  std::string target;         ///< as Target::str() spells it
  std::string rest;           ///< options|specialization, the tuning key, "<n> SMs" or "config <c> <id>, <n> SMs"

  /// The artifact of a specialization (`options` as options_words spells the options Triton
  /// resolves, `specialization` as Specialization::repr).
  static RecordKey artifact(std::string target, std::string_view options, std::string_view specialization);
  /// Autotune layer `layer`'s choice for a tuning key (as Python prints its tuple).
  static RecordKey choice(std::size_t layer, std::string target, std::string tuning_key);
  /// Heuristic `memo`'s values on a device of `multiprocessors` SMs.
  static RecordKey heuristic(std::size_t memo, std::string target, int multiprocessors);
  /// The effects of autotune layer `layer`'s config `config`'s pre_hook on such a device;
  /// `config_id` names the config's values and options (a list edited in place of the same
  /// sources numbers its configs otherwise).
  static RecordKey hook(std::size_t layer, std::size_t config, std::string_view config_id, std::string target,
                        int multiprocessors);

  std::string text() const;
  /// The key `text` spells, or nullopt when it is none of the four.
  static std::optional<RecordKey> parse(std::string_view text);
};

/// An artifact's key in words, for messages: "cuda:90, num_warps=4, num_stages=3, ..., specialization
/// [('*fp32', 'D'), ...]" (the key itself where it is no artifact's).
std::string artifact_words(std::string_view key);

/// "<fingerprint>|<key>": a key as the index files it for the record `fingerprint` names.
std::string fingerprinted(std::string_view fingerprint, std::string_view key);

/// The key in `text` after "<fingerprint>|", or nullopt when `text` is another record's.
std::optional<std::string_view> key_of_record(std::string_view text, std::string_view fingerprint);

}  // namespace tritonrt::detail

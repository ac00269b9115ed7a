#include "common/record_key.h"

#include <charconv>

namespace tritonrt::detail {
namespace {

constexpr std::string_view kChoice = "autotune ";
constexpr std::string_view kHeuristic = "heuristic ";
constexpr std::string_view kHook = "hook ";

// The number at the start of `text`, or nullopt.
std::optional<std::size_t> number(std::string_view text) {
  std::size_t n = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return n;
}

}  // namespace

RecordKey RecordKey::artifact(std::string target, std::string_view options, std::string_view specialization) {
  return {Kind::artifact, 0, std::move(target), std::string(options) + "|" + std::string(specialization)};
}

RecordKey RecordKey::choice(std::size_t layer, std::string target, std::string tuning_key) {
  return {Kind::choice, layer, std::move(target), std::move(tuning_key)};
}

RecordKey RecordKey::heuristic(std::size_t memo, std::string target, int multiprocessors) {
  return {Kind::heuristic, memo, std::move(target), std::to_string(multiprocessors) + " SMs"};
}

RecordKey RecordKey::hook(std::size_t layer, std::size_t config, std::string_view config_id, std::string target,
                          int multiprocessors) {
  return {Kind::hook, layer, std::move(target),
          "config " + std::to_string(config) + " " + std::string(config_id) + ", " + std::to_string(multiprocessors) +
              " SMs"};
}

std::string RecordKey::text() const {
  switch (kind) {
    case Kind::choice:
      return std::string(kChoice) + std::to_string(decorator) + "|" + target + "|" + rest;
    case Kind::heuristic:
      return std::string(kHeuristic) + std::to_string(decorator) + "|" + target + "|" + rest;
    case Kind::hook:
      return std::string(kHook) + std::to_string(decorator) + "|" + target + "|" + rest;
    case Kind::artifact:
      break;
  }
  return target + "|" + rest;
}

std::optional<RecordKey> RecordKey::parse(std::string_view text) {
  RecordKey key;
  const auto bar = text.find('|');
  if (bar == std::string_view::npos) return std::nullopt;
  std::string_view first = text.substr(0, bar), rest = text.substr(bar + 1);
  for (const auto& [prefix, kind] : {std::pair{kChoice, Kind::choice}, std::pair{kHeuristic, Kind::heuristic},
                                     std::pair{kHook, Kind::hook}}) {
    if (!first.starts_with(prefix)) continue;
    const auto decorator = number(first.substr(prefix.size()));
    const auto second = rest.find('|');
    if (!decorator || second == std::string_view::npos) return std::nullopt;
    key.kind = kind;
    key.decorator = *decorator;
    key.target = rest.substr(0, second);
    key.rest = rest.substr(second + 1);
    return key;
  }
  key.target = first;
  key.rest = rest;
  return key;
}

std::string artifact_words(std::string_view key) {
  const auto parsed = RecordKey::parse(key);
  if (!parsed || parsed->kind != RecordKey::Kind::artifact) return std::string(key);
  const auto bar = parsed->rest.find('|');
  if (bar == std::string::npos) return std::string(key);
  return parsed->target + ", " + parsed->rest.substr(0, bar) + ", specialization " + parsed->rest.substr(bar + 1);
}

std::string fingerprinted(std::string_view fingerprint, std::string_view key) {
  return std::string(fingerprint) + "|" + std::string(key);
}

std::optional<std::string_view> key_of_record(std::string_view text, std::string_view fingerprint) {
  if (text.size() <= fingerprint.size() || !text.starts_with(fingerprint) || text[fingerprint.size()] != '|') {
    return std::nullopt;
  }
  return text.substr(fingerprint.size() + 1);
}

}  // namespace tritonrt::detail

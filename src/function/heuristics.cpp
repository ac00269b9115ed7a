#include "function/heuristics.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/log.h"
#include "common/record_key.h"
#include "function/memo.h"

namespace tritonrt::detail {
namespace {

// A heuristic's stored form: {"reads": ..., "value": arg} (memo.h), or nullopt for a value that
// holds in this process only.
std::optional<std::string> stored_form(const MemoEntry& entry) {
  auto value = stored_arg(entry.value, true);
  if (!value) return std::nullopt;
  return stored_text(entry, "value", std::move(*value));
}

// A stored entry for a kernel of `params` parameters, or nullptr when it does not read back.
std::unique_ptr<MemoEntry> from_stored_form(const std::string& text, std::size_t params) {
  return from_stored_text(text, params, "a recorded heuristic value", "value",
                          [](const MemoReader& read, const nlohmann::json& value, MemoEntry& entry) {
                            entry.value = arg_from_stored(read, value, entry.strings, false);
                          });
}

// What heuristic `memo`'s stored values are found by on `device`.
std::string stored_key(std::size_t memo, const DeviceContext& device) {
  return RecordKey::heuristic(memo, device.target.str(), device.multiprocessors).text();
}

// A memo entry for the value Python computed and what it read of `r`'s arguments.
std::unique_ptr<MemoEntry> memo_entry(const HeuristicResult& result, const Resolution& r,
                                      const std::vector<TensorShape>& shapes) {
  auto entry = std::make_unique<MemoEntry>();
  entry->value = kept(result.value, entry->strings);
  if (result.value.kind == ArgKind::string) {
    entry->strings.back() = result.value_text;
    entry->value.value.s = entry->strings.back().data();
    entry->value.size = entry->strings.back().size();
  }
  record_reads(*entry, result.reads, r, shapes);
  return entry;
}

}  // namespace

void Heuristics::apply(Resolution& r) const {
  const auto& layer = kernel_.layers[layer_];
  for (std::size_t h = 0; h < layer.heuristic_names.size(); ++h) {
    const Arg v = value(h, r);
    const auto& target = layer.heuristic_targets[h];
    if (target.param >= 0) {
      r.pass(static_cast<std::size_t>(target.param), v);
    } else {
      CompileOptions set;
      set_option(set, target.option, v, {kernel_.signature.name});
      merge_options(r.options, set, {kernel_.signature.name},
                    [&] { return "heuristic '" + layer.heuristic_names[h] + "'"; });
    }
  }
}

Arg Heuristics::value(std::size_t index, Resolution& r) const {
  const std::size_t memo = first_ + index;
  if (r.cpp_heuristics != nullptr && (*r.cpp_heuristics)[memo]) {
    r.ran = true;
    return (*r.cpp_heuristics)[memo](BoundArgs(kernel_.signature, r.bound(), r.names));
  }
  if (const MemoEntry* entry = r.state.memos[memo].find(r.args, r.device)) {
    r.took(*entry);
    return entry->value;
  }
  r.ran = true;
  return miss(index, r);
}

Arg Heuristics::miss(std::size_t index, Resolution& r) const {
  const std::size_t memo = first_ + index;
  MemoTable& memos = r.state.memos[memo];
  const std::string& name = kernel_.layers[layer_].heuristic_names[index];
  // Values other processes (or a bundle) recorded on this device, read at the first miss.
  const std::string key = r.device != nullptr ? stored_key(memo, *r.device) : "";
  if (!key.empty() && memos.look_at_stored()) {
    const MemoEntry* stored = add_stored(memos, stored_memo_entries(kernel_, key), r,
                                         [&](const std::string& text) { return from_stored_form(text, r.count); });
    if (stored != nullptr) return stored->value;
  }
  std::vector<TensorShape> shapes;
  const auto args = python_args(r, shapes);
  Compiler* compiler = python_side({kernel_.signature.name},
                                   fmt::format("heuristic '{}' has no value recorded for these arguments{}", name,
                                               r.device != nullptr ? " on " + r.device->target.str() : std::string()))
                           .compiler;
  HeuristicResult result;
  {
    GilReleased unlocked;  // the interpreter may be busy on another thread
    result = parse_heuristic_result(kernel_, compiler->run_heuristic(kernel_, layer_, name, args));
  }
  auto entry = memo_entry(result, r, shapes);
  if (!result.memoizable) {
    // It read every argument: nothing to key a memo on. The value serves this call only.
    log_about(LogLevel::debug, {kernel_.signature.name},
              "heuristic '{}' reads every argument: it runs in Python on every call", name);
    return kept(entry->value, r.call_strings());
  }
  memos.store(kernel_, key, stored_form(*entry));
  std::lock_guard lock(r.state.mutex);
  return memos.add(std::move(entry)).value;
}

}  // namespace tritonrt::detail

// An autotune config's pre_hook, run on a call: the C++ hook where one is set, else the Python
// hook, memoized on what it read and the block shapes it set (recorded in the index), or run
// in Python every call where that cannot be seen.
#include "function/autotune.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/log.h"
#include "common/record_key.h"
#include "common/sha256.h"
#include "function/memo.h"

namespace tritonrt::detail {

void Autotune::config_hook(std::size_t config, Resolution& r) const {
  if (r.has_cpp_config_hook()) {
    r.ran = true;
    BlockShapes shapes(kernel_.signature, r.names);
    (*r.cpp_config_hook)(BoundArgs(kernel_.signature, r.bound(), r.names), shapes);
    r.reshape_descriptors(shapes.changes());
  } else if (kernel_.layers[layer_].configs[config].pre_hook) {
    // TRITONRT_MEMOIZE_HOOKS=off: every run in Python, as Triton runs them (for a hook whose
    // effects tritonrt cannot see: a global it changes, memory it writes by other means).
    static const bool memoize = environment_switch("TRITONRT_MEMOIZE_HOOKS", true);
    if (!memoize) {
      r.ran = true;
      r.reshape_descriptors(run_hook("config", r, static_cast<std::ptrdiff_t>(config), false).changes);
    } else if (const MemoEntry* entry = memoized_hook(config, r)) {
      r.took(*entry);
      if (!entry->changes.empty()) r.reshape_descriptors(entry->changes);
    } else {
      r.ran = true;
      hook_miss(config, r);
    }
  }
}

const MemoEntry* Autotune::memoized_hook(std::size_t config, const Resolution& r) const {
  return r.state.hooks[r.state.first_config[layer_] + config].find(r.args, r.device);
}

namespace {

// A config hook's stored form: {"reads": ..., "changes": [[param, block shape]]} (memo.h).
std::optional<std::string> stored_hook_form(const MemoEntry& entry) {
  nlohmann::json changes = nlohmann::json::array();
  for (const auto& [param, block] : entry.changes) changes.push_back({param, block});
  return stored_text(entry, "changes", std::move(changes));
}

// A stored hook effect for a kernel of `params` parameters, or nullptr when it does not read back.
std::unique_ptr<MemoEntry> from_stored_hook_form(const std::string& text, std::size_t params) {
  return from_stored_text(text, params, "a recorded config hook effect", "changes",
                          [params](const MemoReader& read, const nlohmann::json& changes, MemoEntry& entry) {
                            if (!changes.is_array()) read.fail("field 'changes' should be a list");
                            for (const auto& change : changes) {
                              if (!change.is_array() || change.size() != 2 || !change[1].is_array()) {
                                read.fail("holds a malformed change");
                              }
                              const auto param = read.as<std::size_t>(change[0], "param");
                              if (param >= params) read.fail("names a parameter the kernel does not have");
                              std::vector<std::int64_t> block;
                              for (const auto& size : change[1]) {
                                block.push_back(read.as<std::int64_t>(size, "block shape"));
                              }
                              entry.changes.emplace_back(param, std::move(block));
                            }
                          });
}

}  // namespace

void Autotune::hook_miss(std::size_t config, Resolution& r) const {
  const std::size_t number = r.state.first_config[layer_] + config;
  auto& memos = r.state.hooks[number];
  const auto& text = kernel_.layers[layer_].configs[config].text;
  // An effect another process (or a bundle) recorded for the same inputs and device; none
  // looked for where this config's hook ran unmemoized before (it likely does again).
  const std::string key = r.device != nullptr ? RecordKey::hook(layer_, config, sha256_hex(text).substr(0, 16),
                                                                r.device->target.str(), r.device->multiprocessors)
                                                    .text()
                                              : "";
  if (!key.empty() && !r.state.hook_in_python[number].load(std::memory_order_relaxed) && memos.look_at_stored()) {
    const MemoEntry* stored = add_stored(memos, stored_memo_entries(kernel_, key), r,
                                         [&](const std::string& text) { return from_stored_hook_form(text, r.count); });
    if (stored != nullptr) {
      if (!stored->changes.empty()) r.reshape_descriptors(stored->changes);
      return;
    }
  }
  std::vector<TensorShape> shapes;
  const auto args = python_args(r, shapes);
  const std::string json = [&] {
    GilReleased unlocked;  // the interpreter may be busy on another thread
    return python_side({kernel_.signature.name},
                       fmt::format("the pre_hook of autotune config {{{}}} has no effect recorded for these "
                                   "arguments{}",
                                   text, r.device != nullptr ? " on " + r.device->target.str() : std::string()))
        .compiler->run_hook(kernel_, layer_, "config", args, r.launch != nullptr ? r.launch->stream : nullptr,
                            static_cast<std::ptrdiff_t>(config), false, true);
  }();
  const HookResult result = parse_hook_result(kernel_, json);
  auto entry = std::make_unique<MemoEntry>();
  record_reads(*entry, result.reads, r, shapes);  // before the reshape: what the hook was shown
  entry->changes = result.changes;
  r.reshape_descriptors(result.changes);
  if (!result.memoizable) {
    if (!r.state.hook_in_python[number].exchange(true)) {
      log_about(LogLevel::info, {kernel_.signature.name},
                "the pre_hook of autotune config {{{}}} runs in Python on every call: it {}", text, result.why);
    }
    return;
  }
  memos.store(kernel_, key, stored_hook_form(*entry));
  std::lock_guard lock(r.state.mutex);
  memos.add(std::move(entry));
}

HookResult Autotune::run_hook(const char* which, const Resolution& r, std::ptrdiff_t config, bool reset_only,
                              bool record) const {
  std::vector<TensorShape> shapes;
  const auto args = python_args(r, shapes);
  std::string json;
  {
    GilReleased unlocked;
    json = python_side({kernel_.signature.name}, "its autotuner has hooks")
               .compiler->run_hook(kernel_, layer_, which, args, r.launch != nullptr ? r.launch->stream : nullptr,
                                   config, reset_only, record);
  }
  return parse_hook_result(kernel_, json);
}

}  // namespace tritonrt::detail

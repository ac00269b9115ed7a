#include "function/autotune.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <string_view>
#include <utility>

#include "common/hashing.h"
#include "common/kinds/kinds.h"
#include "common/log.h"
#include "common/record_key.h"
#include "common/trace.h"
#include "function/front_end_abi.h"
#include "function/memo.h"
#include "launch/benchmark.h"
#include "launch/device_memory.h"

namespace tritonrt::detail {
namespace {

// same_value, for std::equal: a function that is always inlined cannot be passed by pointer.
constexpr auto same_key_value = [](const Arg& a, const Arg& b) { return same_value(a, b); };

// The bytes a pointer argument spans, for reset_to_zero and restore_value; 0 when unknown.
std::size_t extent_of(const Arg& a) {
  if (a.kind != ArgKind::pointer) return 0;
  return a.source == ArgSource::tensor ? shape_of(a).bytes : a.size;
}

// CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many registers for the block): Triton's OutOfResources.
constexpr int kLaunchOutOfResources = 701;

// Lexicographic over (median, 20th, 80th percentile), as Triton's min over its timing lists.
bool faster(const std::array<double, 3>& a, const std::array<double, 3>& b) { return a < b; }

// The tuning key as Python prints Triton's tuple, for messages.
std::string key_text(const std::vector<Arg>& key) {
  std::string text = "(";
  for (std::size_t i = 0; i < key.size(); ++i) {
    if (i) text += ", ";
    const auto key_repr = kind_ops(key[i].kind).key_repr;
    text += key_repr != nullptr ? key_repr(key[i]) : python_repr(key[i], {});
  }
  return text + (key.size() == 1 ? ",)" : ")");
}

// Whether a config's failure skips it, as Triton skips a config that does not compile or
// does not fit the device.
bool skippable(const Error& e) {
  const auto* driver = dynamic_cast<const DriverError*>(&e);
  return dynamic_cast<const CompileError*>(&e) != nullptr || dynamic_cast<const ResourceError*>(&e) != nullptr ||
         (driver != nullptr && driver->code() == kLaunchOutOfResources);
}

// What "none of its configs ran" says of the configs' failures, given as (config, why): each
// distinct reason once, after the configs it stopped; its first line on theirs, the text after
// it (Triton's message with its caret line, say) indented beneath as one block.
std::string failure_report(const std::vector<std::pair<std::string, std::string>>& failures) {
  std::vector<std::pair<std::string_view, std::string>> reasons;  // why, and the configs it stopped
  for (const auto& [config, why] : failures) {
    auto same = std::find_if(reasons.begin(), reasons.end(), [&](const auto& reason) { return reason.first == why; });
    if (same == reasons.end()) same = reasons.insert(reasons.end(), {why, ""});
    same->second += (same->second.empty() ? "{" : ", {") + config + "}";
  }
  std::string report;
  for (const auto& [why, configs] : reasons) {
    const std::size_t cut = std::min(why.find('\n'), why.size());
    report.append("\n  ").append(configs).append(": ").append(why.substr(0, cut));
    std::string_view text = cut < why.size() ? why.substr(cut + 1) : std::string_view();
    while (text.ends_with('\n')) text.remove_suffix(1);
    for (std::size_t start = 0; !text.empty() && start <= text.size();) {
      const std::size_t end = std::min(text.find('\n', start), text.size());
      report.append("\n");
      if (end > start) report.append("    ").append(text.substr(start, end - start));
      start = end + 1;
    }
  }
  return report;
}

// The timings Triton's own tuning file (cache_results) holds for `key`, into `timings` and
// `timed` for each candidate it holds; false where there is none. Called with the GIL released.
bool read_triton_timings(const KernelDescription& kernel, std::size_t layer, const Target& target,
                         const std::vector<Arg>& key, const std::vector<std::size_t>& candidates,
                         std::vector<std::array<double, 3>>& timings, TuningTimes& timed) {
  const auto stored = python_side({kernel.signature.name}, "its tuning results are shared with Triton")
                          .compiler->read_tuning(kernel, layer, target, key, candidates);
  if (!stored) return false;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if ((*stored)[i] && (*stored)[i]->size() == 3) {
      timings[i] = {(*stored)[i]->at(0), (*stored)[i]->at(1), (*stored)[i]->at(2)};
      timed.configs.push_back(candidates[i]);  // as Triton: the configs the file holds
      timed.timings.push_back(*(*stored)[i]);
    }
  }
  return true;
}

// Tuning's progress lines: at info level, or whatever the level with TRITON_PRINT_AUTOTUNING.
class Progress {
 public:
  Progress(const KernelDescription& kernel, std::size_t layer)
      : site_{kernel.signature.name}, verbose_(kernel.layers[layer].print || log_enabled(LogLevel::info)) {}
  template <class... Args>
  void say(fmt::format_string<Args...> format, Args&&... args) const {
    if (verbose_) write_log(LogLevel::info, message_about(site_, fmt::format(format, std::forward<Args>(args)...)));
  }

 private:
  ErrorSite site_;
  bool verbose_;
};

// What a tuner does around each timed launch in place of user hooks: the arguments of
// reset_to_zero zeroed, those of restore_value copied aside and back.
class ArgumentRestore {
 public:
  ArgumentRestore(const KernelDescription& kernel, const DecoratorLayer& tuner, const Resolution& r, void* stream)
      : stream_(stream) {
    if (tuner.user_pre_hook) return;  // the tuner's own hooks do it
    const auto extent = [&](std::size_t p, const char* list) {
      const std::size_t bytes = extent_of(r.args[p]);
      if (bytes == 0) {
        raise<ArgumentError>(param_site(kernel.signature, p),
                             "is in the autotuner's {}: tritonrt must know how many bytes it spans (pass a tensor "
                             "through tritonrt/torch.h, or tritonrt::DevicePtr{{address, dtype, bytes}})",
                             list);
      }
      return std::make_pair(r.args[p].value.u, bytes);
    };
    for (const std::size_t p : tuner.reset_to_zero) zeroed_.push_back(extent(p, "reset_to_zero"));
    for (const std::size_t p : tuner.restore_value) restored_.push_back(extent(p, "restore_value"));
    for (const auto& [address, bytes] : restored_) copies_.push_back(std::make_unique<StreamBuffer>(bytes, stream));
  }
  void before() const {
    for (const auto& [address, bytes] : zeroed_) zero_async(address, bytes, stream_);
    for (std::size_t k = 0; k < restored_.size(); ++k) {
      copy_async(copies_[k]->address(), restored_[k].first, restored_[k].second, stream_);
    }
  }
  void after() const {
    for (std::size_t k = 0; k < restored_.size(); ++k) {
      copy_async(restored_[k].first, copies_[k]->address(), restored_[k].second, stream_);
    }
  }

 private:
  void* stream_;
  std::vector<std::pair<std::uint64_t, std::size_t>> zeroed_, restored_;
  std::vector<std::unique_ptr<StreamBuffer>> copies_;
};

}  // namespace

std::size_t Autotune::choose(Resolution& r, TrialMaker& function) const {
  const auto& tuner = kernel_.layers[layer_];
  if (tuner.configs.size() == 1) return 0;  // as Triton: one config is used without tuning
  // Triton's key: the values of the key parameters the call gives, then the dtype of every
  // pointer argument it gives, in the order given. Stack storage, written only as used.
  alignas(Arg) std::byte storage[sizeof(Arg) * kMaxParams * 2];
  Arg* key_args = reinterpret_cast<Arg*>(storage);
  std::size_t count = 0;
  for (const std::size_t k : tuner.keys) {
    if (!r.passed[k]) continue;
    if (r.args[k].kind == ArgKind::descriptor) [[unlikely]] {
      raise<ArgumentError>(param_site(kernel_.signature, k),
                           "is a tensor descriptor, and its autotuner's key names it; Triton cannot key on one "
                           "either (a TensorDescriptor is unhashable)");
    }
    if (r.args[k].kind == ArgKind::tuple) [[unlikely]] {
      raise<ArgumentError>(param_site(kernel_.signature, k),
                           "is a tuple, and its autotuner's key names it; tritonrt does not key tuning on tuples: key "
                           "on the parameters its values come from");
    }
    key_args[count++] = r.args[k];
  }
  for (std::size_t i = 0; i < r.passed_count; ++i) {
    const Arg& a = r.args[r.order[i]];
    if (a.kind != ArgKind::pointer) continue;
    Arg dtype;  // the dtype, with where it came from: Triton keys on str(arg.dtype)
    dtype.kind = ArgKind::dtype;
    dtype.dtype = a.dtype;
    dtype.source = a.source;
    key_args[count++] = dtype;
  }
  const std::span<const Arg> key(key_args, count);
  std::uint64_t hash = kHashSeed;
  for (const Arg& a : key) hash = hash_constexpr(hash, a);
  for (const TuningEntry* entry : r.state.tunings[layer_].entries()) {
    if (entry->hash != hash || entry->key.size() != key.size()) continue;
    if (std::equal(key.begin(), key.end(), entry->key.begin(), same_key_value)) {
      r.keyed = true;
      return entry->config;
    }
  }
  r.ran = true;
  return tune(std::vector<Arg>(key.begin(), key.end()), hash, r, function);
}

std::vector<std::size_t> Autotune::candidates(const Resolution& r) const {
  const auto& tuner = kernel_.layers[layer_];
  std::vector<std::size_t> kept(tuner.configs.size());
  for (std::size_t i = 0; i < kept.size(); ++i) kept[i] = i;
  if (!tuner.prune) return kept;
  std::vector<TensorShape> shapes;
  const auto args = python_args(r, shapes);
  std::vector<std::size_t> given;  // what Triton's run receives positionally
  for (const std::size_t p : kernel_.call_params) {
    if (r.passed[p]) given.push_back(p);
  }
  GilReleased unlocked;
  kept = python_side({kernel_.signature.name}, "its autotuner prunes configs")
             .compiler->prune_configs(kernel_, layer_, args, given);
  if (kept.empty()) raise<ArgumentError>({kernel_.signature.name}, "pruning left no autotune config to try");
  return kept;
}

void Autotune::apply(std::size_t config, Resolution& r) const {
  const auto& c = kernel_.layers[layer_].configs[config];
  for (const auto& [param, value] : c.params) r.pass(param, value);
  merge_options(r.options, c.options, {kernel_.signature.name}, [&] { return "the autotune config {" + c.text + "}"; });
}

std::size_t Autotune::tune(std::vector<Arg> key, std::uint64_t hash, Resolution& r, TrialMaker& function) const {
  if (r.device == nullptr || r.launch == nullptr) {
    raise<ArgumentError>({kernel_.signature.name},
                         "is autotuned: which config it compiles to is decided by tuning on a GPU; "
                         "compile_configs() compiles each config for a target");
  }
  // One tuning per key, however many threads ask at once; the others wait for its choice.
  std::string flight = std::to_string(layer_) + "|";
  for (const Arg& a : key) {
    flight += std::to_string(static_cast<int>(a.kind)) + ":" +
              (a.kind == ArgKind::string ? std::string(a.value.s, a.size) : std::to_string(a.value.u)) + "|";
  }
  std::promise<std::size_t> promise;
  std::shared_future<std::size_t> future;
  {
    GilReleased unlocked;
    std::lock_guard lock(r.state.mutex);
    for (const TuningEntry* entry : r.state.tunings[layer_].entries()) {
      if (entry->hash == hash &&
          std::equal(key.begin(), key.end(), entry->key.begin(), entry->key.end(), same_key_value)) {
        return entry->config;
      }
    }
    if (const auto it = r.state.tuning_in_flight.find(flight); it != r.state.tuning_in_flight.end()) {
      future = it->second;
    } else {
      r.state.tuning_in_flight.emplace(flight, promise.get_future().share());
    }
  }
  if (future.valid()) {
    {
      GilReleased unlocked;
      try {
        return future.get();
      } catch (const OwnRunTakesCall&) {
        if (front_end_launch_running()) throw;
      }
    }
    // The key was handed to a front-end call's Python run, which has no answer for this caller.
    return tune(std::move(key), hash, r, function);
  }
  try {
    // Events and buffers belong to the launch's context, whichever this thread has current.
    const ScopedContext in(r.device->context);
    const std::size_t chosen = run_tuning(key, r, function);
    GilReleased unlocked;
    std::lock_guard lock(r.state.mutex);
    auto entry = std::make_unique<TuningEntry>();
    entry->hash = hash;
    for (const Arg& a : key) entry->key.push_back(kept(a, entry->strings));
    entry->config = chosen;
    r.state.tunings[layer_].add(std::move(entry));
    r.state.tuning_in_flight.erase(flight);
    promise.set_value(chosen);
    return chosen;
  } catch (...) {
    {
      GilReleased unlocked;
      std::lock_guard lock(r.state.mutex);
      r.state.tuning_in_flight.erase(flight);  // a failed tuning is tried again by the next call
    }
    promise.set_exception(std::current_exception());
    throw;
  }
}

void Autotune::time_candidates(const std::vector<std::size_t>& candidates, Resolution& r, TrialMaker& function,
                               std::vector<std::array<double, 3>>& timings,
                               std::vector<std::pair<std::string, std::string>>& failures) const {
  const auto& tuner = kernel_.layers[layer_];
  const Progress progress(kernel_, layer_);
  void* const stream = r.launch->stream;
  const ArgumentRestore restore(kernel_, tuner, r, stream);
  // All compiled (at once) before any is timed; each timed as Triton times it.
  std::vector<MadeTrial> made = function.trials(layer_, candidates, r);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const std::size_t c = candidates[i];
    const auto& config = tuner.configs[c];
    progress.say("autotuning with config {}", config.text);
    try {
      if (made[i].error) std::rethrow_exception(made[i].error);
      const std::unique_ptr<Trial> trial = std::move(made[i].trial);
      const auto once = [&] {
        // The block shapes a config's hook sets were read back when the trial was made (its
        // kernel depends on them); a Python one runs again before each launch for whatever
        // else it does, unless all it does is memoized.
        if (config.pre_hook && !r.has_cpp_config_hook() && memoized_hook(c, trial->resolution()) == nullptr)
          run_hook("config", trial->resolution(), static_cast<std::ptrdiff_t>(c), false);
        if (tuner.user_pre_hook) {
          run_hook("pre_hook", trial->resolution(), -1, false);
        } else {
          restore.before();
        }
        trial->launch();
        if (tuner.user_post_hook) {
          run_hook("post_hook", trial->resolution(), -1, false);
        } else if (!tuner.user_pre_hook) {
          restore.after();
        }
      };
      timings[i] = benchmark(once, stream);
      progress.say("config {}: {:f} ms", config.text, timings[i][0]);
    } catch (const Error& e) {
      if (!skippable(e)) throw;
      failures.emplace_back(config.text, e.what());
      const std::string_view why = failures.back().second;
      progress.say("skipped config {}: {}", config.text, why.substr(0, why.find('\n')));
    }
  }
}

std::size_t Autotune::run_tuning(const std::vector<Arg>& key, Resolution& r, TrialMaker& function) const {
  // A kernel described through this process's Python has a tuner object there, which Triton's
  // own path fills (Autotuner.cache): a choice it holds is taken first, as Triton takes it, and
  // tritonrt's choice goes there too, so that the process keeps one config per key whichever
  // path launches (install() and uninstall() in turn, a kernel launched both ways).
  const bool live = kernel_.handle >= 0;
  const ErrorSite site{kernel_.signature.name};
  // A tuner that keeps its own choices and tunes with its own run (FlagGems' LibTuner) is left
  // its run for a key it lacks where the call came from Python: that run tunes and keeps the
  // choice where the next call finds it here. From C++, tritonrt tunes it as Triton's would.
  if (live) {
    TunerChoice remembered;
    {
      GilReleased unlocked;
      remembered = python_side(site, "its tuner is Python's").compiler->remembered_choice(kernel_, layer_, key);
    }
    if (remembered.config) return *remembered.config;
    if (remembered.own_run_tunes && front_end_launch_running()) {
      log_about(LogLevel::info, site,
                "its tuner has no config for key {}: its own run tunes it, then tritonrt "
                "launches with its choice",
                key_text(key));
      // That run compiles and times its configs one after another; compiled here first, all at
      // once, each of its launches finds its binary made (what fails to compile is its to meet).
      if (const std::vector<std::size_t> kept = candidates(r); kept.size() > 1 && !is_capturing(r.launch->stream)) {
        (void)function.trials(layer_, kept, r);
      }
      throw OwnRunTakesCall("its tuner's own run tunes key " + key_text(key));
    }
  }
  TuningTimes timed;
  const std::size_t chosen = decide(key, r, function, timed);
  if (live) {
    GilReleased unlocked;
    python_side(site, "its tuner is Python's")
        .compiler->remember_choice(kernel_, layer_, key, chosen, timed.configs.empty() ? nullptr : &timed);
  }
  return chosen;
}

std::size_t Autotune::decide(const std::vector<Arg>& key, Resolution& r, TrialMaker& function,
                             TuningTimes& timed) const {
  const auto& tuner = kernel_.layers[layer_];
  const ErrorSite site{kernel_.signature.name};
  void* const stream = r.launch->stream;
  if (is_capturing(stream)) {
    raise<ArgumentError>(site,
                         "needs tuning for key {}, which cannot run inside a CUDA graph capture: launch it once "
                         "before capturing",
                         key_text(key));
  }
  const Progress progress(kernel_, layer_);
  const auto started = std::chrono::steady_clock::now();
  const Target& target = r.device->target;
  // A choice made before, by this or another process (or bundled), for the same sources,
  // target and key: taken as Triton takes its in-memory one (no pruning, no timing, no Python).
  const std::string choice_key = RecordKey::choice(layer_, target.str(), key_text(key)).text();
  if (const auto stored = stored_choice(kernel_, layer_, choice_key)) {
    progress.say("tuning result for key {} read from {}: {}", key_text(key), stored->where,
                 tuner.configs[stored->config].text);
    return stored->config;
  }

  Traced traced(site, "tuning for key {}", key_text(key));
  const std::vector<std::size_t> candidates = this->candidates(r);
  // Pruning left one config: Triton from 3.8 takes it without timing it (nor recording it).
  if (candidates.size() == 1 && !tuner.tune_lone_pruned) return candidates[0];
  const bool hooks_in_configs =
      std::any_of(candidates.begin(), candidates.end(), [&](std::size_t c) { return tuner.configs[c].pre_hook; });
  const bool persist = tuner.cache_results && !key.empty() && !hooks_in_configs;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::array<double, 3>> timings(candidates.size(), {inf, inf, inf});
  std::vector<std::pair<std::string, std::string>> failures;
  bool from_file = false;
  if (persist) {
    GilReleased unlocked;
    from_file = read_triton_timings(kernel_, layer_, target, key, candidates, timings, timed);
    if (from_file) progress.say("tuning result for key {} read from Triton's cache", key_text(key));
  }
  if (!from_file) {
    const auto timing_started = std::chrono::steady_clock::now();  // as Triton's bench_time: compiles and timings
    time_candidates(candidates, r, function, timings, failures);
    timed.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - timing_started).count();
  }
  const auto best = std::min_element(timings.begin(), timings.end(), faster);
  if (!std::isfinite((*best)[0])) {
    raise<CompileError>(site, "none of its {} autotune configs ran for key {}:{}", candidates.size(), key_text(key),
                        failure_report(failures));
  }
  const std::size_t chosen = candidates[static_cast<std::size_t>(best - timings.begin())];
  if (!from_file) {
    timed.configs = candidates;
    for (const auto& t : timings) timed.timings.push_back({t[0], t[1], t[2]});
    // As Triton: the reset_to_zero arguments are zeroed once more before the real launch.
    if (tuner.user_pre_hook) {
      run_hook("pre_hook", r, -1, true);
    } else {
      for (const std::size_t p : tuner.reset_to_zero) zero_async(r.args[p].value.u, extent_of(r.args[p]), stream);
    }
    if (persist) {
      GilReleased unlocked;
      python_side(site, "its tuning results are shared with Triton")
          .compiler->write_tuning(kernel_, layer_, target, key, candidates, timed.timings);
    }
  }
  store_choice(kernel_, layer_, choice_key, chosen);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  progress.say("autotuning for key {} finished after {:f} s; best config selected: {}", key_text(key), seconds,
               tuner.configs[chosen].text);
  return chosen;
}

}  // namespace tritonrt::detail

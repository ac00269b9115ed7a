// An @triton.autotune layer of a decorated kernel: the config for a call's tuning key, tuned
// once per key and device (configs pruned, compiled and timed in C++ on the call's stream as
// triton.testing.do_bench times them), then looked up; choices are shared with other
// processes through tritonrt's index and, where the tuner caches results, Triton's own file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "function/decorators.h"

namespace tritonrt::detail {

/// One config's call, made ready by the function being tuned, to launch again and again
/// while it is timed.
class Trial {
 public:
  virtual ~Trial() = default;
  /// The call with the config applied (and the decorators under it): what hooks are shown.
  virtual const Resolution& resolution() const = 0;
  virtual void launch() = 0;
};

/// A config's trial, or why it could not be made (its compile failed, say).
struct MadeTrial {
  std::unique_ptr<Trial> trial;
  std::exception_ptr error;
};

/// The function an autotuner tunes: it makes the configs' trials through its own prepare, find
/// and miss path (JitFunction::Impl), the compiles they need running at once.
class TrialMaker {
 public:
  /// One per entry of `configs`, in order.
  virtual std::vector<MadeTrial> trials(std::size_t layer, std::span<const std::size_t> configs,
                                        const Resolution& r) = 0;

 protected:
  ~TrialMaker() = default;
};

class Autotune {
 public:
  Autotune(const KernelDescription& kernel, std::size_t layer) : kernel_(kernel), layer_(layer) {}

  /// The config for the call's tuning key: a lookup after the key's first call (no lock, no
  /// allocation, no Python), which tunes (one thread per key; the others wait for it).
  std::size_t choose(Resolution& r, TrialMaker& function) const;
  /// The configs a call tries: all, or those the tuner's pruning keeps.
  std::vector<std::size_t> candidates(const Resolution& r) const;
  /// Sets config `config`'s values and options into `r` (its pre_hook is the caller's).
  void apply(std::size_t config, Resolution& r) const;
  /// Runs config `config`'s hook on `r` (the C++ one when set, else its Python pre_hook, if
  /// any) and gives the call's descriptors the block shapes it sets. A Python pre_hook whose
  /// run only set block shapes from what it read is memoized on that, as heuristics are (and
  /// recorded in the index): a later call that reads the same takes no lock and calls no Python.
  void config_hook(std::size_t config, Resolution& r) const;
  /// Calls the tuner's "pre_hook" or "post_hook", or "config" (config `config`'s pre_hook);
  /// where `record`, also says what it read (HookResult).
  HookResult run_hook(const char* which, const Resolution& r, std::ptrdiff_t config, bool reset_only,
                      bool record = false) const;

 private:
  /// The memoized run of config `config`'s pre_hook that a call of `r` would repeat, or null.
  const MemoEntry* memoized_hook(std::size_t config, const Resolution& r) const;
  [[gnu::cold]] void hook_miss(std::size_t config, Resolution& r) const;
  [[gnu::cold]] std::size_t tune(std::vector<Arg> key, std::uint64_t hash, Resolution& r, TrialMaker& function) const;
  std::size_t run_tuning(const std::vector<Arg>& key, Resolution& r, TrialMaker& function) const;
  /// The config for a key no tuner memory holds: an indexed choice, Triton's file, or timed.
  // `timed` gets the timings where the configs were timed or read from Triton's file.
  std::size_t decide(const std::vector<Arg>& key, Resolution& r, TrialMaker& function, TuningTimes& timed) const;
  /// Each candidate's timings (median, 20th, 80th percentile): `timings`' entries stay
  /// infinite for those skipped, as Triton skips configs that do not compile or fit, and
  /// `failures` gets (config, why) for each of them.
  void time_candidates(const std::vector<std::size_t>& candidates, Resolution& r, TrialMaker& function,
                       std::vector<std::array<double, 3>>& timings,
                       std::vector<std::pair<std::string, std::string>>& failures) const;

  const KernelDescription& kernel_;
  std::size_t layer_;
};

}  // namespace tritonrt::detail

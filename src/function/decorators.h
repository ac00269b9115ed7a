// A decorated call resolved as Triton's runtime resolves it: the decorators applied outermost
// first, each seeing the values the ones outside it set (heuristics.h, autotune.h). What the
// decorators remember between calls is kept per device context: each heuristic's values,
// memoized on what it read, and each autotuner's choice per tuning key, both read without a
// lock (published lists); adding to them is rare and locked.
#pragma once

#include <algorithm>
#include <cstddef>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/compile_options.h"
#include "common/errors.h"
#include "common/published.h"
#include "compiler/compiler.h"
#include "launch/context.h"
#include "tritonrt/jit_function.h"
#include "tritonrt/launch.h"
#include "tritonrt/tensor_descriptor.h"

namespace tritonrt::detail {

/// One memoized answer of Python code around the kernel (function/memo.h): each input it read
/// with what it found, and what it answered: a heuristic's value, or the block shapes a
/// config's pre_hook set.
struct MemoEntry {
  struct Read {
    std::size_t param;
    Facet facet;
    Arg found;                       ///< value, present (as boolean), dtype, address, device
    std::vector<std::int64_t> dims;  ///< shape or strides
  };
  std::vector<Read> reads;
  Arg value;                        ///< a heuristic's
  BlockShapeChanges changes;        ///< a config hook's
  std::deque<std::string> strings;  ///< behind string values above
};

/// One heuristic's (or config hook's) memo entries, found by the values they read: an entry
/// is filed under a hash of the integers and bools it found (the rest of what it read is
/// compared, not hashed), so a call finds its entry in constant time however many inputs were
/// seen. Reads are lock-free; adds are serialized by DecoratorState::mutex (function/memo.cpp).
class MemoTable {
 public:
  /// The entry whose reads `args` (on `device`) would read the same, or nullptr.
  const MemoEntry* find(const Arg* args, const DeviceContext* device) const;
  /// Adds `entry`; returns it.
  const MemoEntry& add(std::unique_ptr<MemoEntry> entry);
  /// Whether a miss should look for entries the index or a bundle holds: at the memo's first
  /// miss, and at each one until the process has started Python (a process without Python
  /// keeps finding what others record meanwhile); the caller adds what it finds.
  bool look_at_stored();
  /// Whether `text`, a stored entry, is new to this memo (the caller adds it then); under
  /// DecoratorState::mutex.
  bool new_stored(const std::string& text) { return stored_texts_.insert(text).second; }
  /// Records `text`, a new entry's stored form (none: it holds in this process only), under
  /// `key` in `kernel`'s records, until they say they take no more.
  void store(const KernelDescription& kernel, const std::string& key, const std::optional<std::string>& text);

 private:
  /// What some entries read, in order: (parameter, facet) pairs; `number` tells the sets apart
  /// in hashes.
  struct ReadSet {
    std::size_t number;
    std::vector<std::pair<std::size_t, Facet>> reads;
  };
  PublishedList<const ReadSet> read_sets_;
  PublishedTable<const MemoEntry> entries_;
  std::atomic<bool> stored_looked_{false};
  std::atomic<bool> stored_full_{false};  ///< the records take no more (or there are none)
  std::unordered_set<std::string> stored_texts_;
};

/// One tuning key's choice.
struct TuningEntry {
  std::uint64_t hash = 0;
  std::vector<Arg> key;
  std::deque<std::string> strings;  ///< behind string values in the key
  std::size_t config = 0;
};

/// A decorated call resolved whole from the decorators' memory (each heuristic's value and
/// config hook's effect memoized, the config the caller's or its tuning key's): what those
/// answers read of the passed arguments, and what the resolution made of the call. Every
/// decorator answers from what it read, so a later call of the same form that reads the same
/// resolves the same: it takes these values without walking the decorators (recall).
struct ResolvedCall {
  std::size_t form = 0;                    ///< its ResolvedCalls::Form's number
  std::size_t given = 0;                   ///< arguments passed
  std::ptrdiff_t chosen = -1;              ///< the caller's autotune config (LaunchConfig), or -1
  OptionsKey caller_options{CompileOptions{}};
  std::vector<ArgKind> kinds;              ///< of each passed argument
  /// What the answers read of passed arguments: the values of integers and booleans (most of
  /// a tuner's key and of what hooks read) as (parameter, kind, bits), checked in one tight
  /// loop; every other read in `reads` (reads only).
  struct IntegerRead {
    std::uint32_t param;
    ArgKind kind;
    std::uint64_t bits;
  };
  std::vector<IntegerRead> integer_reads;
  MemoEntry reads;
  std::vector<std::pair<std::size_t, Arg>> values;  ///< each parameter not passed, as resolved
  BlockShapeChanges changes;               ///< passed descriptors' block shapes as the hooks left them
  CompileOptions options;                  ///< as the decorators resolved them
};

struct Resolution;

/// The calls of one kernel and context remembered whole, found without a lock in constant time:
/// grouped by form (what was passed: how many arguments, their kinds, the caller's options and
/// config, and which of them were read as integers or bools), each call filed under a hash of
/// its form and those integers' values (function/resolved_calls.cpp).
class ResolvedCalls {
 public:
  /// Calls remembered at most (each a distinct input of the call's decorators): beyond, calls
  /// resolve layer by layer.
  static constexpr std::size_t kMaxCalls = 4096;

  /// The remembered call that a launch of `n` passed arguments (bound in `r.args`, of `kinds`,
  /// with the caller's options `caller`) resolves as, or nullptr.
  const ResolvedCall* find(std::size_t n, const ArgKind* kinds, const OptionsKey& caller, const Resolution& r) const;
  /// Remembers `call` (the caller serializes adds); false where kMaxCalls are kept.
  bool add(std::unique_ptr<ResolvedCall> call);
  /// Whether none is remembered; whether no more will be; lock-free.
  bool empty() const noexcept { return forms_.entries().empty(); }
  bool full() const noexcept { return count_.load(std::memory_order_relaxed) >= kMaxCalls; }

 private:
  /// What a form's calls passed, and the parameters they read as integers or bools, in the
  /// order its first call listed them.
  struct Form {
    std::size_t number;
    std::size_t given;
    std::ptrdiff_t chosen;
    OptionsKey caller_options{CompileOptions{}};
    std::vector<ArgKind> kinds;
    std::vector<std::uint32_t> integer_params;
  };
  PublishedList<const Form> forms_;
  PublishedTable<const ResolvedCall> calls_;
  std::atomic<std::size_t> count_{0};
};

/// The decorators' memory for one device context (or for explicit targets).
struct DecoratorState {
  explicit DecoratorState(const KernelDescription& kernel);

  std::mutex mutex;                                                         ///< serializes adds and the in-flight map
  std::vector<MemoTable> memos;                                             ///< per heuristic, over all layers in order
  std::vector<MemoTable> hooks;                                             ///< per config, over all layers in order
  std::vector<std::size_t> first_config;                                    ///< per layer: its first config's number
  std::vector<std::atomic<bool>> hook_in_python;  ///< per config: its hook ran in Python unmemoized (said once)
  std::vector<PublishedList<const TuningEntry>> tunings;                    ///< per layer (autotune layers use theirs)
  std::map<std::string, std::shared_future<std::size_t>> tuning_in_flight;  ///< per layer and key
  ResolvedCalls resolved;                                                   ///< launches' whole resolutions
};

/// A heuristic computed in C++ instead of Python (JitFunction::set_heuristic).
using CppHeuristic = std::function<Arg(const BoundArgs&)>;
/// Autotune configs' hook in C++ instead of their Python pre_hooks (JitFunction::set_config_hook).
using CppConfigHook = std::function<void(const BoundArgs&, BlockShapes&)>;

/// A decorated call being resolved: the full argument list, filled in by the call, then by
/// each decorator (heuristics' values, a tuned config's), then defaults; which parameters have
/// a value (Triton's presence: defaults do not count) and in what order (its tuning key lists
/// dtypes in that order); the options decorators set; where it runs.
struct Resolution {
  Resolution(const KernelDescription& k, Arg* a, CompileOptions& o, DecoratorState& s, const DeviceContext* d)
      : kernel(k), args(a), options(o), state(s), device(d) {}
  /// A copy of `from` (presence and order) over other storage: a config's trial.
  Resolution(Arg* a, CompileOptions& o, const Resolution& from)
      : kernel(from.kernel),
        args(a),
        options(o),
        state(from.state),
        device(from.device),
        count(from.count),
        passed_count(from.passed_count),
        launch(from.launch),
        cpp_heuristics(from.cpp_heuristics),
        cpp_config_hook(from.cpp_config_hook),
        names(from.names) {
    std::copy(from.passed, from.passed + from.count, passed);
    std::copy(from.order, from.order + from.passed_count, order);
  }

  const KernelDescription& kernel;
  Arg* args;
  CompileOptions& options;
  DecoratorState& state;
  const DeviceContext* device;  ///< the launch's device context; null for explicit targets
  std::size_t count = 0;        ///< parameters, as bind_call set them up
  bool passed[kMaxParams];      ///< only the first `count` are written
  std::uint16_t order[kMaxParams];
  std::size_t passed_count = 0;
  const LaunchConfig* launch = nullptr;            ///< the launch's grid and stream (null: no launch)
  std::optional<std::deque<std::string>> strings;  ///< behind values that serve this call only (made on first use)
  /// Descriptors a hook reshaped, for this call: the first few in place (a hit allocates
  /// nothing), any more in `descriptors`. keep_descriptors moves them out.
  static constexpr std::size_t kInlineDescriptors = 4;
  alignas(TensorDescriptor) std::byte inline_descriptors[kInlineDescriptors * sizeof(TensorDescriptor)];
  std::size_t inline_count = 0;
  std::list<TensorDescriptor> descriptors;
  const std::vector<CppHeuristic>* cpp_heuristics = nullptr;  ///< by heuristic number, over all layers
  const CppConfigHook* cpp_config_hook = nullptr;             ///< set: it runs, not the configs' pre_hooks
  const ParamNames* names = nullptr;  ///< the kernel's, for the BoundArgs and BlockShapes of C++ heuristics and hooks
  /// What decided this call, for remember(): the memo entries whose answers it took, whether
  /// a tuner chose by its key; `ran` once anything answered otherwise (Python, a C++
  /// heuristic or hook, a tuning, a decorator overriding a passed argument).
  static constexpr std::size_t kMaxRecalled = 16;
  const MemoEntry* recalled[kMaxRecalled];
  std::size_t recalled_count = 0;
  bool keyed = false;
  bool ran = false;

  void pass(std::size_t param, const Arg& value) {
    args[param] = value;
    if (!passed[param]) {
      order[passed_count++] = static_cast<std::uint16_t>(param);
    } else {
      ran = true;  // a decorator's value over the caller's: not remembered whole
    }
    passed[param] = true;
  }
  /// This call took `entry`'s memoized answer.
  void took(const MemoEntry& entry) {
    if (recalled_count == kMaxRecalled) {
      ran = true;
    } else {
      recalled[recalled_count++] = &entry;
    }
  }
  std::span<const Arg> bound() const { return {args, count}; }
  /// Storage for strings that serve this call only; a deque made on first use (an empty one
  /// allocates, and a cache hit must not).
  std::deque<std::string>& call_strings() {
    if (!strings) strings.emplace();
    return *strings;
  }
  /// Whether a C++ config hook runs in place of the configs' Python pre_hooks.
  bool has_cpp_config_hook() const { return cpp_config_hook != nullptr && *cpp_config_hook; }
  /// Whether the call passes a tensor descriptor (a hook may set its block shape).
  bool has_descriptors() const {
    return std::any_of(args, args + count, [](const Arg& a) { return a.kind == ArgKind::descriptor; });
  }
  /// The block shapes a hook set: each such argument becomes a copy of its descriptor with
  /// that block shape (checked as TensorDescriptor checks one), kept in `descriptors`; the
  /// caller's stays as it was.
  void reshape_descriptors(const BlockShapeChanges& changes);
  /// Moves the descriptors a hook reshaped into `into`, where they outlive this resolution, and
  /// points the arguments at them there.
  void keep_descriptors(std::list<TensorDescriptor>& into);
};

/// The call's arguments bound into `r` (the parameters no decorator sets, then defaults for
/// those omitted: a value heuristics see, not a passed one); throws ArgumentError.
void bind_call(std::span<const Arg> given, Resolution& r);
/// Each parameter still without a value gets its default; one without a default is an error.
void fill_unset(Resolution& r);
/// Resolves a launch's call (`r` fresh, with its launch) from a ResolvedCall it matches: the
/// passed arguments bound, the rest set, options and descriptors as resolved; false (nothing
/// promised of `r`'s arguments) where none matches. Which parameters were passed, and in what
/// order (`passed`, `order`), it leaves unset: they serve the decorators only.
bool recall(std::span<const Arg> given, Resolution& r);
/// Remembers `r`, a launch's call just resolved layer by layer, as a ResolvedCall when every
/// decorator answered from memory.
void remember(std::span<const Arg> given, const Resolution& r);

/// The arguments Python code around the kernel is shown (heuristics, hooks, pruning): those
/// with a value, tensors with their shapes (kept in `shapes`).
std::vector<PythonArg> python_args(const Resolution& r, std::vector<TensorShape>& shapes);
/// A tensor argument's shape (through the installed inspector); dims -1 when unknown.
TensorShape shape_of(const Arg& a);
/// same_value for the kinds other than bool and integers.
bool same_other_value(const Arg& a, const Arg& b);
/// Whether two values are the same for a memo or a tuning key (strings by content). Bools and
/// integers, most of what heuristics, hooks and keys read, are compared inline.
[[gnu::always_inline]] inline bool same_value(const Arg& a, const Arg& b) {
  if (a.kind == b.kind && (a.kind == ArgKind::sint || a.kind == ArgKind::uint || a.kind == ArgKind::boolean)) {
    return a.value.u == b.value.u;
  }
  return same_other_value(a, b);
}
/// `a`, with a string's text copied into `strings` so that it outlives the call it came from.
Arg kept(const Arg& a, std::deque<std::string>& strings);
/// Sets the compile option `name` (Triton's name) from a decorator's value; false if there is none.
bool set_option(CompileOptions& options, std::string_view name, const Arg& value, const ErrorSite& site);
/// Merges the options a decorator sets into the call's; an option the caller set to another
/// value is an error, as Triton's "multiple values for keyword argument". `by` names the
/// decorator (called only for that error).
void merge_options(CompileOptions& into, const CompileOptions& from, const ErrorSite& site,
                   const std::function<std::string()>& by);

}  // namespace tritonrt::detail

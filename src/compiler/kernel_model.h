// The kernel model: a kernel as the call path knows it (its signature, its parameters'
// specialization, its decorators with their configs), and what the Python code around a
// kernel is shown of a call and answers. The bridge describes it (src/python_compiler/), the
// stores keep its description (src/store/), src/function/ applies it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/specialization.h"
#include "tritonrt/arg.h"
#include "tritonrt/options.h"
#include "tritonrt/signature.h"

namespace tritonrt::detail {

/// What a decorator sets: a kernel parameter, or a compile option (num_warps, ...).
struct Assignee {
  std::ptrdiff_t param = -1;  ///< the parameter's index, or -1 for an option
  std::string option;         ///< the option's name (Triton's), when not a parameter
};

/// One config of an autotuner: parameter values and compile options.
struct TuningConfig {
  std::vector<std::pair<std::size_t, Arg>> params;  ///< parameter index, value
  CompileOptions options;
  bool pre_hook = false;  ///< Config.pre_hook is set (called before every launch with it)
  std::string text;       ///< str(config), as Triton prints it
};

/// One decorator around the kernel, as the call path applies it.
struct DecoratorLayer {
  Decorator::Kind kind = Decorator::Kind::wrapper;
  // Heuristics: what each one sets, in the order Triton evaluates them.
  std::vector<std::string> heuristic_names;
  std::vector<Assignee> heuristic_targets;
  // Autotune.
  std::vector<std::size_t> keys;  ///< indices of the `key` names that are parameters
  std::vector<TuningConfig> configs;
  std::vector<std::size_t> reset_to_zero, restore_value;
  bool user_pre_hook = false, user_post_hook = false;
  bool prune = false;            ///< early_config_prune, perf_model or an overridden prune_configs
  bool cache_results = false;    ///< persist results where Triton's check_disk_cache reads them
  bool print = false;            ///< TRITON_PRINT_AUTOTUNING
  bool tune_lone_pruned = true;  ///< the one config pruning left is benchmarked all the same (Triton < 3.8)
};

class KernelRecords;  // src/store/kernel_records.h

/// A kernel as the call path knows it: described by the bridge, or read back from
/// one of its stores (src/store/kernel_records.h) without Python.
struct KernelDescription {
  std::string source, name;  ///< as JitFunction::get was given them
  /// The bridge's number for the kernel once Python imported it; -1 while it has not (a
  /// kernel from the index is imported on the first call that needs Python). Set by the
  /// compiler module with the GIL held.
  mutable int handle = -1;
  bool through_python = false;  ///< described by the bridge in this process, not read from a bundle or the index
  std::shared_ptr<const SpecializationRules> rules;  ///< those of the Triton that described it
  /// Where what is compiled, tuned and memoized for it is kept (the bundle or the index record
  /// it was read from, or its index record when Python described it); null where nowhere.
  std::shared_ptr<KernelRecords> records;
  /// Read from the index: set, for all the description's copies, by the compiler module when
  /// Python imports the kernel in this process (then its records are used only once the code
  /// imported was compared with them). Null for a kernel from a bundle or described through
  /// Python.
  std::shared_ptr<std::atomic<bool>> imported_since;
  KernelSignature signature;
  std::vector<ParamRule> param_rules;        ///< per parameter, in the specializer's compact form
  std::vector<std::optional<Arg>> defaults;  ///< Arg form of each Python default, if any
  std::deque<std::string> strings;           ///< storage behind string defaults and config values
  std::vector<DecoratorLayer> layers;        ///< outermost first
  std::vector<std::size_t> call_params;      ///< the parameters a call passes, in order
  /// For a kernel named by module: the folders its import searched (sys.path), in order.
  std::optional<std::vector<std::string>> search_path;
};

/// What a heuristic or hook read of the call's arguments (the bridge's facets,
/// bridge/arguments.py); `kind`: whether an argument is a pointer, a descriptor, ... (a hook's
/// isinstance test).
enum class Facet : std::uint8_t { value, present, dtype, address, shape, strides, device, kind };

/// A heuristic's value for one call, and what it read to get it.
struct HeuristicResult {
  Arg value;
  std::string value_text;                            ///< storage behind a string value
  bool memoizable = true;                            ///< false when it read every argument
  std::vector<std::pair<std::size_t, Facet>> reads;  ///< parameter index, facet
};

/// An argument as the Python code around a kernel is shown it (heuristics, hooks, pruning).
struct PythonArg {
  std::size_t param;
  const Arg* value;
  const TensorShape* shape;  ///< a tensor's shape, when it has one
  /// A tuple's: its elements' shapes, depth first (dims -1 where there is none).
  const TensorShape* element_shapes = nullptr;
};

/// Tensor descriptors' block shapes as an autotune hook left them, (parameter, block shape):
/// Triton's tutorials and Hopper libraries pass descriptors with a placeholder block shape and
/// let each config's pre_hook set the one it loads (`nargs["a_desc"].block_shape = [BM, BK]`).
using BlockShapeChanges = std::vector<std::pair<std::size_t, std::vector<std::int64_t>>>;  // as BlockShapes::Changes

/// An autotune hook's run: the descriptors whose block shape it set, and whether that is all it
/// did, from what it read (then a later call that reads the same gets the same block shapes
/// without Python).
struct HookResult {
  BlockShapeChanges changes;
  bool memoizable = false;
  std::vector<std::pair<std::size_t, Facet>> reads;  ///< parameter index, facet
  std::string why;                                   ///< when not memoizable: what the hook did
};

/// One parameter of a compile request: its specialization and the value (read for
/// constexprs, and a tuple's constexpr elements).
struct CompileParam {
  const ParamSpec* spec = nullptr;
  Arg value;
};

}  // namespace tritonrt::detail

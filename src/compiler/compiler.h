// The compiler layer as the rest of libtritonrt sees it. The Python half, the only code that
// touches Python, lives in the module libtritonrt_python.so (python_compiler.cpp), loaded on
// first use: the core links no libpython, so inside a Python process the module binds to
// that process's interpreter, and elsewhere the core first loads the libpython it was built
// against (after checking its version). What the module answers is parsed and checked here.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/specialization.h"
#include "tritonrt/artifact.h"
#include "tritonrt/log.h"
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
/// tritonrt's index (src/store/index.h) without Python.
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
  /// Read from a store: set, for all the description's copies, by the compiler module when
  /// Python imports the kernel in this process (then its records are used only once the code
  /// imported was compared with them). Null for a kernel described through Python.
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

/// Triton's files for one compiled kernel, as the module found them; unchecked.
struct CompiledFiles {
  std::string metadata_json;
  std::string binary;
  std::string binary_kind;  ///< "cubin" or "hsaco"
  std::string cache_dir;    ///< Triton's cache folder holding them
  bool from_cache = false;  ///< the folder held them before this compile (a cache hit)
  std::string unreadable;   ///< why Triton could not read its cache entry (then the rest is empty)
};

/// How a tuning chose: each config timed (Triton's three quantiles, in ms; infinite where it
/// failed), by index in the tuner's configs, and the seconds compiling and timing them took
/// (0 when the timings were read from a persisted result).
struct TuningTimes {
  std::vector<std::size_t> configs;
  std::vector<std::vector<double>> timings;
  double seconds = 0;
};

/// The module's interface: answers straight from the bridge, parsed by the functions below.
class Compiler {
 public:
  virtual ~Compiler() = default;
  /// Imports `source` once and describes kernel `name` (JSON); throws SourceError.
  virtual std::string describe_kernel(std::string_view source, std::string_view name) = 0;
  /// Imports what compiling needs of Triton (JSON: its version, the modules loaded, whether
  /// torch is among them).
  virtual std::string import_triton() = 0;
  /// How the installed Triton specializes values (JSON).
  virtual std::string specialization_rules() = 0;
  /// What the kernel was made from, as the bridge observed it (JSON object: files, modules, environment;
  /// bridge.dependencies); throws SourceError where it cannot all be observed.
  virtual std::string kernel_dependencies(const KernelDescription& kernel) = 0;
  /// Whether the kernel, described through Python, is still the object its module holds under
  /// its name (bridge.is_current): not after a reload, a redefinition, or another module of
  /// that name listed in its place.
  virtual bool is_current(const KernelDescription& kernel) = 0;
  /// Compiles one specialization; throws CompileError or TargetError.
  virtual CompiledFiles compile(const KernelDescription& kernel, const Target& target, const CompileOptions& options,
                                const std::vector<CompileParam>& params) = 0;
  /// Heuristic `name` of decorator `layer` on the call's arguments (JSON: value and reads);
  /// throws PythonError with the heuristic's own message when it raises.
  virtual std::string run_heuristic(const KernelDescription& kernel, std::size_t layer, const std::string& name,
                                    const std::vector<PythonArg>& args) = 0;
  /// The configs decorator `layer` keeps after its pruning; `given` are the parameters the
  /// caller passed (positional in Python), the others keyword arguments.
  virtual std::vector<std::size_t> prune_configs(const KernelDescription& kernel, std::size_t layer,
                                                 const std::vector<PythonArg>& args,
                                                 const std::vector<std::size_t>& given) = 0;
  /// Calls an autotune hook: "pre_hook", "post_hook" or "config" (config `config`'s pre_hook).
  /// Returns JSON: the descriptors whose block shape the hook changed and, where `record`,
  /// what it read of the arguments or why its run cannot be memoized (parse_hook_result).
  virtual std::string run_hook(const KernelDescription& kernel, std::size_t layer, const char* which,
                               const std::vector<PythonArg>& args, void* stream, std::ptrdiff_t config,
                               bool reset_only, bool record) = 0;
  /// Timings a persisted tuning result holds for `configs` (nullopt per config it lacks), or
  /// nothing when there is none. `key` is the tuning key's values, in order.
  virtual std::optional<std::vector<std::optional<std::vector<double>>>> read_tuning(
      const KernelDescription& kernel, std::size_t layer, const Target& target, const std::vector<Arg>& key,
      const std::vector<std::size_t>& configs) = 0;
  /// Persists a tuning result where Triton's check_disk_cache reads it.
  virtual void write_tuning(const KernelDescription& kernel, std::size_t layer, const Target& target,
                            const std::vector<Arg>& key, const std::vector<std::size_t>& configs,
                            const std::vector<std::vector<double>>& timings) = 0;
  /// The config the tuner object of a kernel described through Python holds for `key` in its
  /// own memory (Triton's Autotuner.cache: chosen by Triton's path in this process), or nothing.
  virtual std::optional<std::size_t> remembered_choice(const KernelDescription& kernel, std::size_t layer,
                                                       const std::vector<Arg>& key) = 0;
  /// Puts `config` in that memory for `key`, as Triton's Autotuner.run keeps its choice; where
  /// the choice was timed (or read from a persisted result), `timed` says how, for the tuner's
  /// configs_timings and bench_time.
  virtual void remember_choice(const KernelDescription& kernel, std::size_t layer, const std::vector<Arg>& key,
                               std::size_t config, const TuningTimes* timed) = 0;
};

/// Python, started once per process: the compiler module loaded (with libpython where the
/// process has none), Triton imported and its specialization rules read, each step timed
/// at TRITONRT_LOG=info.
struct PythonSide {
  Compiler* compiler = nullptr;
  std::string rules_json;  ///< as the bridge answered (the index keeps it)
  std::shared_ptr<const SpecializationRules> rules;
};

/// The process's Python side, started on first use. The one place that decides Python is
/// unavailable: then a PythonError about `site`, "<needed>, and Python is unavailable (why)".
PythonSide& python_side(const ErrorSite& site, std::string_view needed);

/// Kernel `name` of `source`: from a loaded bundle that holds it, else from tritonrt's index
/// when it holds a fresh record (no Python started in either case), otherwise imported
/// through Python (once per source) and recorded in the index. Throws SourceError, or
/// PythonError saying why neither could serve it when Python cannot be loaded.
KernelDescription kernel_description(std::string_view source, std::string_view name);
/// Kernel `name` of `source` as the process's Python holds it now: imported (or found
/// imported) through Python, never read from a bundle or the index, and recorded in the index.
KernelDescription live_kernel_description(std::string_view source, std::string_view name);
/// Whether `kernel` was described through Python and its module still holds that very object
/// under its name; false for a kernel read from a bundle or the index (no Python is started).
bool is_current(const KernelDescription& kernel);

/// The bridge's description of a kernel (JSON) in C++ form; a malformed description is a
/// PythonError naming what is wrong.
KernelDescription parse_kernel_description(std::string_view json);

/// The bridge's answer from a heuristic (JSON) in C++ form.
HeuristicResult parse_heuristic_result(const KernelDescription& kernel, std::string_view json);
/// The bridge's answer for an autotune hook's run in C++ form; throws PythonError where malformed.
HookResult parse_hook_result(const KernelDescription& kernel, std::string_view json);

/// The bridge's answer about the specialization rules (JSON) in C++ form.
SpecializationRules parse_specialization_rules(std::string_view json);

/// The artifact for one specialization, `key` naming it (target, options, specialization):
/// from the kernel's bundle, or from tritonrt's index when the kernel is indexed and the
/// index holds it, otherwise
/// compiled through Triton and checked (an entry of Triton's cache that is unreadable or
/// invalid is set aside and compiled once more; still invalid is an ArtifactError), then
/// recorded in the index.
Artifact compile(const KernelDescription& kernel, const Target& target, const CompileOptions& options,
                 const std::vector<CompileParam>& params, const std::string& key);

/// An autotuner's choice made before.
struct StoredChoice {
  std::size_t config;  ///< the config's index
  std::string where;   ///< the store: "the index" or "the bundle <path>"
};

/// An autotuner's choice (decorator `layer`) recorded under `key` (target and tuning key) in
/// the kernel's records (its bundle, or its index record); or nullopt.
std::optional<StoredChoice> stored_choice(const KernelDescription& kernel, std::size_t layer, const std::string& key);

/// Records an autotuner's choice in the kernel's records (nothing in a bundle, or where it has none).
void store_choice(const KernelDescription& kernel, std::size_t layer, const std::string& key, std::size_t config);

/// The memo entries recorded under `key` (a heuristic's values, or a config hook's effects, and
/// the device they were run for) in the kernel's records (its bundle, or its index record):
/// JSON texts, as src/function/memo.h describes them.
std::vector<std::string> stored_memo_entries(const KernelDescription& kernel, const std::string& key);

/// Records one memo entry in the kernel's records (nothing in a bundle, or where it has none).
void store_memo_entry(const KernelDescription& kernel, const std::string& key, const std::string& entry);

/// Lets go of the GIL for its lifetime if the calling thread holds it, so that waiting on a
/// lock another thread holds while it compiles (and needs the GIL) cannot deadlock. Works
/// before the compiler is loaded: it finds the process's Python, if any, by symbol.
class GilReleased {
 public:
  GilReleased();
  ~GilReleased();
  GilReleased(const GilReleased&) = delete;
  GilReleased& operator=(const GilReleased&) = delete;

 private:
  void* state_ = nullptr;
};

}  // namespace tritonrt::detail

namespace tritonrt::detail {

struct EmbeddedPython;

/// What the core lends its compiler module when it loads it. The module links no libtritonrt
/// (which exports its public API only, and which a test or benchmark holds statically
/// instead): it compiles in the stateless helpers of src/common and reaches the state it
/// shares with the core (the log's level and handler, the Python chosen to embed) through
/// these.
struct CompilerHost {
  LogLevel (*log_level)() noexcept;
  void (*write_log)(LogLevel level, std::string_view message);
  const EmbeddedPython& (*embedded_python)();
};

}  // namespace tritonrt::detail

/// The module's entry point (C linkage, found with dlsym); `host` outlives the process's use
/// of the module.
extern "C" tritonrt::detail::Compiler* tritonrt_make_compiler(const tritonrt::detail::CompilerHost* host);

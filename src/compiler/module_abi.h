// The contract between libtritonrt and its compiler module libtritonrt_python.so
// (src/python_compiler/): the interface the module implements, what the core lends it, and its
// C entry point. The module answers in the bridge's JSON; src/compiler/ parses and checks it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/kernel_model.h"
#include "tritonrt/artifact.h"
#include "tritonrt/log.h"

namespace tritonrt::detail {

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

/// What a tuner object of a kernel described through Python holds for a tuning key: the
/// config, where it holds one; `own_run_tunes` where it keeps its own tuned choices and tunes
/// a key it lacks with its own run (FlagGems' LibTuner: its policy, its database), which then
/// takes the call wherever a Python run can.
struct TunerChoice {
  std::optional<std::size_t> config;
  bool own_run_tunes = false;
};

/// The module's interface: answers straight from the bridge, parsed by compiler.h's parse_* functions.
class Compiler {
 public:
  virtual ~Compiler() = default;
  /// Imports `source` once and describes kernel `name` (JSON); throws SourceError.
  virtual std::string describe_kernel(std::string_view source, std::string_view name) = 0;
  /// Describes the kernel `object` is (a PyObject*: a @triton.jit function or decorators over
  /// one), which no module need name, as describe_kernel does; the bridge keeps the object
  /// alive. The caller holds the GIL. Throws SourceError.
  virtual std::string describe_object(const void* object) = 0;
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
  /// own memory (Triton's Autotuner.cache: chosen by Triton's path in this process; FlagGems'
  /// LibTuner's database, under its own key), or nothing.
  virtual TunerChoice remembered_choice(const KernelDescription& kernel, std::size_t layer,
                                        const std::vector<Arg>& key) = 0;
  /// Puts `config` in that memory for `key`, as Triton's Autotuner.run keeps its choice; where
  /// the choice was timed (or read from a persisted result), `timed` says how, for the tuner's
  /// configs_timings and bench_time.
  virtual void remember_choice(const KernelDescription& kernel, std::size_t layer, const std::vector<Arg>& key,
                               std::size_t config, const TuningTimes* timed) = 0;
};

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

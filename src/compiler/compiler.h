// The compiler layer as the rest of libtritonrt sees it: a kernel described and its artifacts
// compiled, each served from the kernel's stores (src/store/kernel_records.h) when they hold
// it, otherwise through Python. Python runs only in the module libtritonrt_python.so
// (src/python_compiler/), loaded on first use: the core links no libpython, so inside a Python
// process the module binds to that process's interpreter, and elsewhere the core first loads
// the libpython it was built against (after checking its version). What the module answers
// is parsed and checked here.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/kernel_model.h"
#include "compiler/module_abi.h"
#include "tritonrt/artifact.h"

namespace tritonrt::detail {

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
/// Whether python_side has started (so a miss will run Python rather than fail); lock-free.
bool python_side_started() noexcept;

/// Kernel `name` of `source`: from a loaded bundle that holds it, else from tritonrt's index
/// when it holds a fresh record (no Python started in either case), otherwise imported
/// through Python (once per source) and recorded in the index. Throws SourceError, or
/// PythonError saying why neither could serve it when Python cannot be loaded.
KernelDescription kernel_description(std::string_view source, std::string_view name);
/// Kernel `name` of `source` as the process's Python holds it now: imported (or found
/// imported) through Python, never read from a bundle or the index, and recorded in the index.
KernelDescription live_kernel_description(std::string_view source, std::string_view name);
/// The kernel `object` is (a PyObject*, handed over by the Python front end with the GIL held:
/// a @triton.jit function or decorators over one that no module in sys.modules names, as one
/// made inside a function or one of a module its loader kept out of sys.modules), described
/// through Python from the object itself. No other process can name it, so it has no records:
/// its binaries come from Triton's cache.
KernelDescription object_kernel_description(const void* object);
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

/// Records one memo entry in the kernel's records (nothing in a bundle, or where it has none);
/// false where they record no more under `key`.
bool store_memo_entry(const KernelDescription& kernel, const std::string& key, const std::string& entry);

/// The binary's file and the metadata's that Triton's own CompiledKernel of `artifact` is made
/// from: the Triton cache entry it was compiled into, else tritonrt's copy beside its index
/// (store/triton_cache.h). Throws ArtifactError.
std::vector<std::filesystem::path> files_for_triton(const Artifact& artifact);

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

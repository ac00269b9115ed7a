#include "compiler/compiler.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <vector>

#include "common/errors.h"
#include "common/json.h"
#include "common/log.h"
#include "common/record_key.h"
#include "common/trace.h"
#include "store/module_search.h"
#include "compiler/python_discovery.h"
#include "store/kernel_records.h"
#include "store/triton_cache.h"
#include "tritonrt/version.h"

namespace tritonrt::detail {
namespace {

// The process's Python C API, if it has one, looked up without linking libpython.
struct HostPython {
  int (*is_initialized)() = nullptr;
  int (*gil_check)() = nullptr;
  void* (*save_thread)() = nullptr;
  void (*restore_thread)(void*) = nullptr;

  HostPython() {
    is_initialized = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "Py_IsInitialized"));
    gil_check = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "PyGILState_Check"));
    save_thread = reinterpret_cast<void* (*)()>(dlsym(RTLD_DEFAULT, "PyEval_SaveThread"));
    restore_thread = reinterpret_cast<void (*)(void*)>(dlsym(RTLD_DEFAULT, "PyEval_RestoreThread"));
  }
  bool present() const { return is_initialized && gil_check && save_thread && restore_thread; }
};

HostPython host_python() {
  static const HostPython cached;
  if (cached.present()) return cached;
  return HostPython();  // the compiler may have loaded libpython since: look again
}

std::filesystem::path module_path() {
  if (const char* p = std::getenv("TRITONRT_PYTHON_MODULE"); p && *p) return p;
  // Next to libtritonrt itself, in the build tree and once installed.
  const auto library = library_path();
  if (!library) {
    raise<PythonError>({}, "cannot locate libtritonrt to find its compiler module; set TRITONRT_PYTHON_MODULE");
  }
  if (!library->filename().string().starts_with("libtritonrt")) {
    // Linked in as an archive (tritonrt::core_static): nothing of tritonrt lies beside the program.
    raise<PythonError>({},
                       "{} holds tritonrt itself (linked as an archive), so no compiler module lies beside a "
                       "libtritonrt: Python (to describe or compile a kernel, or run its Python) needs "
                       "TRITONRT_PYTHON_MODULE set to the libtritonrt_python.so of the same tritonrt (in the pip "
                       "package: the folder `python -c \"import tritonrt; print(tritonrt.library_dir)\"` prints); "
                       "what its embedded bundles hold runs without it",
                       library->string());
  }
  return library->parent_path() / "libtritonrt_python.so";
}

// The module is built against one Python minor version; any other one's ABI differs, and
// using it crashes. Asked through Py_GetVersion, which is safe before the interpreter starts.
void check_python_version(void* library, const std::string& which) {
  using GetVersion = const char* (*)();
  auto get_version = reinterpret_cast<GetVersion>(dlsym(library, "Py_GetVersion"));
  if (get_version == nullptr) raise<PythonError>({}, "{} is not a Python library (it has no Py_GetVersion)", which);
  const std::string version = get_version();
  const std::string release = version.substr(0, version.find(' '));
  const std::string wanted = TRITONRT_PYTHON_VERSION;
  if (release != wanted && !release.starts_with(wanted + ".")) {
    raise<PythonError>({},
                       "{} is Python {}, but tritonrt's compiler module was built for Python {} (set "
                       "TRITONRT_LIBPYTHON to a Python {} library, or rebuild tritonrt against this Python)",
                       which, release, wanted, wanted);
  }
}

Compiler* load_compiler() {
  if (dlsym(RTLD_DEFAULT, "Py_IsInitialized") != nullptr) {
    check_python_version(RTLD_DEFAULT, "this process's Python");
  } else {
    // No Python in this process: bring in the one to embed, globally, so the module's Python
    // symbols bind to it.
    const std::string chosen = embedded_python().library;
    const char* library = chosen.c_str();
    void* handle = dlopen(library, RTLD_LAZY | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      raise<PythonError>({}, "compiling needs Python, and {} could not be loaded: {} (set TRITONRT_LIBPYTHON)", library,
                         (why ? why : "unknown reason"));
    }
    check_python_version(handle, library);
    if (dlopen(library, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) == nullptr) {
      const char* why = dlerror();
      raise<PythonError>({}, "could not make {}'s symbols global: {}", library, (why ? why : "unknown reason"));
    }
  }
  const auto path = module_path();
  void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (module == nullptr) {
    const char* why = dlerror();
    raise<PythonError>({}, "cannot load the compiler module {}: {}", path.string(), (why ? why : "unknown reason"));
  }
  auto make = reinterpret_cast<decltype(&tritonrt_make_compiler)>(dlsym(module, "tritonrt_make_compiler"));
  if (make == nullptr) raise<PythonError>({}, "{} is not a tritonrt compiler module", path.string());
  static const CompilerHost host{&tritonrt::log_level, &write_log, &embedded_python};
  return make(&host);
}

// Triton's files as an artifact for `target`, or why they cannot be one.
std::optional<std::string> make_artifact(CompiledFiles& files, const Target& target, Artifact& artifact) {
  if (!files.unreadable.empty()) return "Triton could not read it: " + files.unreadable;
  try {
    artifact.metadata = KernelMetadata::parse(files.metadata_json);
  } catch (const ArtifactError& e) {
    return without_prefix(e.what());
  }
  artifact.binary = std::move(files.binary);
  artifact.binary_kind = files.binary_kind;
  artifact.cache_dir = files.cache_dir;
  return artifact_problem(artifact, target);
}

// Why a kernel named by module, read from the index, may no longer be what its import
// finds (another file along its search path now), or nullopt when it still is.
std::optional<std::string> moved_module(const KernelDescription& kernel) {
  if (!kernel.search_path) return std::nullopt;
  const auto found = find_module_file(kernel.source, *kernel.search_path);
  if (!found) {
    return "where '" + kernel.source +
           "' is imported from cannot be told without Python (its import is not a plain file along its search path)";
  }
  std::error_code ec, ec2;
  if (std::filesystem::weakly_canonical(*found, ec) != std::filesystem::weakly_canonical(kernel.signature.file, ec2)) {
    return "'" + kernel.source + "' would now be imported from '" + *found + "', not from '" + kernel.signature.file +
           "' it was compiled from";
  }
  return std::nullopt;
}

// The kernel's records, where they may be used: none for a kernel filed nowhere, nor, once and
// for all, for one read from a store whose code Python, importing it later in this process,
// found changed (what Python compiles then is not the code the records name; said once).
const KernelRecords* records(const KernelDescription& kernel) {
  if (kernel.records == nullptr) return nullptr;
  const bool imported = kernel.imported_since != nullptr && kernel.imported_since->load();
  const auto differs = [&]() -> std::optional<std::string> {
    try {
      (void)python_side({kernel.name}, "checking the kernel against its files").compiler->kernel_dependencies(kernel);
    } catch (const Error& e) {
      return without_prefix(e.what());
    }
    return moved_module(kernel);
  };
  return kernel.records->usable(imported, differs) ? kernel.records.get() : nullptr;
}

// Set once python_side has started.
std::atomic<bool> python_started{false};

}  // namespace

bool python_side_started() noexcept { return python_started.load(std::memory_order_acquire); }

PythonSide& python_side(const ErrorSite& site, std::string_view needed) {
  // Started once per process; a failed start throws and is tried again by the next caller.
  static std::mutex mutex;
  static std::optional<PythonSide> side;
  GilReleased unlocked;  // another thread may hold the GIL and wait here too
  std::lock_guard lock(mutex);
  if (side) return *side;
  try {
    PythonSide started;
    {
      Traced traced({}, "starting Python");
      started.compiler = load_compiler();
    }
    {
      Traced traced({}, "importing Triton");
      const JsonReader<PythonError> read({}, "the bridge's account of importing Triton");
      const auto imported = read.parse(started.compiler->import_triton());
      traced.note(fmt::format("(Triton {}; {} modules loaded{})", read.field<std::string>(imported, "triton"),
                              read.field<std::int64_t>(imported, "modules"),
                              read.field<bool>(imported, "torch") ? ", torch among them" : ", torch not"));
    }
    started.rules_json = started.compiler->specialization_rules();
    started.rules = std::make_shared<const SpecializationRules>(parse_specialization_rules(started.rules_json));
    side = std::move(started);
    python_started.store(true, std::memory_order_release);
    return *side;
  } catch (const PythonError& e) {
    raise<PythonError>(site, "{}, and Python is unavailable ({})", needed, without_prefix(e.what()));
  }
}

namespace {

// What the index keeps of the bridge's description: the same but for the kernel's handle,
// which numbers the kernels of this process only (a stored kernel is read with none). Every
// process then records one text, and one fingerprint, for one kernel, whatever order it
// loaded its kernels in.
std::string stored_description(const std::string& description) {
  auto j = nlohmann::json::parse(description, nullptr, false);
  if (!j.is_object() || !j.contains("handle")) return description;
  j["handle"] = -1;
  return dump_json(j);
}

// The bridge's description of a kernel this process's Python holds, with the rules of the
// Triton that described it.
KernelDescription from_bridge(const PythonSide& python, std::string_view description) {
  KernelDescription kernel = parse_kernel_description(description);
  kernel.rules = python.rules;
  kernel.through_python = true;
  return kernel;
}

// Kernel `name` of `source` imported through Python and described by the bridge, then
// recorded in the index; `why` says why nothing else served it (in the error when Python
// cannot be loaded).
KernelDescription described_through_python(std::string_view source, std::string_view name, const std::string& why) {
  // Named arguments: with temporaries GCC 13 warns that the (process-wide) result may dangle.
  const ErrorSite site{name};
  const std::string unavailable = fmt::format("cannot be loaded from '{}' ({})", source, why);
  const PythonSide& python = python_side(site, unavailable);
  Compiler* compiler = python.compiler;
  std::string description;
  {
    Traced traced({name}, "importing '{}' through Python", source);
    description = compiler->describe_kernel(source, name);
  }
  KernelDescription kernel = from_bridge(python, description);
  kernel.source = source;
  kernel.name = name;
  if (index_enabled()) {
    // A kernel whose inputs cannot all be observed still runs, through Python every time.
    try {
      const JsonReader<PythonError> read({name}, "the bridge's account of what the kernel was made from");
      const auto inputs = read.parse(compiler->kernel_dependencies(kernel));
      if (!inputs.is_object()) read.fail("is not an object");
      kernel.records = file_kernel(source, name, stored_description(description), python.rules_json, inputs);
    } catch (const Error& e) {
      log_about(LogLevel::info, {name}, "not indexed: {}", without_prefix(e.what()));
    }
  }
  return kernel;
}

}  // namespace

KernelDescription kernel_description(std::string_view source, std::string_view name) {
  // A kernel read back without Python: its description and rules as the bridge wrote them.
  KernelDescription kernel;
  const auto accept = [&](const StoredKernel& stored) -> std::optional<std::string> {
    try {
      kernel = parse_kernel_description(stored.description);
      kernel.rules = std::make_shared<const SpecializationRules>(parse_specialization_rules(stored.rules));
    } catch (const Error& e) {
      return "its description does not parse: " + without_prefix(e.what());
    }
    kernel.handle = -1;
    kernel.source = source;
    kernel.name = name;
    return stored.records->follows_sources() ? moved_module(kernel) : std::nullopt;
  };
  std::string why;
  if (auto stored = find_stored_kernel(source, name, why, accept)) {
    kernel.records = std::move(stored->records);
    if (kernel.records->follows_sources()) kernel.imported_since = std::make_shared<std::atomic<bool>>(false);
    log_about(LogLevel::debug, {name}, "loaded from {}, without Python", kernel.records->where());
    return kernel;
  }
  log_about(LogLevel::debug, {name}, "not served by a bundle or the index ({}): loading it through Python", why);
  return described_through_python(source, name, why);
}

KernelDescription live_kernel_description(std::string_view source, std::string_view name) {
  return described_through_python(source, name, "it was asked for as Python holds it now");
}

KernelDescription object_kernel_description(const void* object) {
  const PythonSide& python = python_side({}, "describing a kernel object");
  std::string description;
  {
    Traced traced({}, "describing a kernel object through Python");
    description = python.compiler->describe_object(object);
  }
  KernelDescription kernel = from_bridge(python, description);
  kernel.name = kernel.signature.name;
  if (index_enabled()) {
    log_about(LogLevel::info, {kernel.name}, "not indexed: it was described from its object, which no module names");
  }
  return kernel;
}

bool is_current(const KernelDescription& kernel) {
  if (!kernel.through_python) return false;
  return python_side({kernel.signature.name}, "checking the kernel against its module").compiler->is_current(kernel);
}

Artifact compile(const KernelDescription& kernel, const Target& target, const CompileOptions& options,
                 const std::vector<CompileParam>& params, const std::string& key) {
  const ErrorSite site{kernel.signature.name};
  const KernelRecords* stored = records(kernel);
  if (stored != nullptr) {
    if (auto found = stored->find_artifact(key, target)) {
      log_about(LogLevel::debug, site, "artifact for {} found in {}", target.str(), stored->where());
      return std::move(*found);
    }
  }
  const std::string held =
      stored != nullptr ? stored->lacks_artifact(key) : "nothing compiled for this call (" + artifact_words(key) + ")";
  const bool read_only = stored != nullptr && stored->read_only();
  std::error_code ec;
  if (read_only && kernel.source.ends_with(".py") && !std::filesystem::exists(kernel.source, ec)) {
    raise<ArtifactError>(site, "{}, and its source '{}' is not here to compile it from", held, kernel.source);
  }
  Compiler* compiler = python_side(site, held).compiler;
  if (read_only) {
    // The call was specialized by the bundled Triton's rules: only the same Triton may
    // compile what those rules made of it.
    const std::string here = triton_version();
    if (here != kernel.rules->triton_version) {
      raise<ArtifactError>(site,
                           "{}; Triton {} here cannot compile it for the bundle's Triton {} (bundle it with this call, "
                           "or load the kernel without the bundle)",
                           held, here, kernel.rules->triton_version);
    }
  }
  Traced traced(site, "compiling for {}", target.str());
  for (int attempt = 0;; ++attempt) {
    CompiledFiles files = compiler->compile(kernel, target, options, params);
    traced.note(files.from_cache ? "(Triton's cache had it)" : "(Triton compiled it)");
    Artifact artifact;
    const auto problem = make_artifact(files, target, artifact);
    if (!problem) {
      // Asked again: compiling may have been this process's first import of the kernel.
      if (const KernelRecords* filing = records(kernel)) filing->put_artifact(key, artifact);
      return artifact;
    }
    if (!files.from_cache) {
      // Just compiled, not read from a damaged entry: setting it aside would not help.
      raise<ArtifactError>(site, "Triton compiled an artifact tritonrt cannot use for {} (in {}): {}", target.str(),
                           files.cache_dir, *problem);
    }
    if (attempt > 0 || files.cache_dir.empty()) {
      raise<ArtifactError>(site, "Triton's cache entry {} for {} is still invalid after recompiling: {}",
                           files.cache_dir, target.str(), *problem);
    }
    // A damaged entry would fail every later compile too: move it away and build it again.
    const std::string moved = set_aside(files.cache_dir);
    log_about(LogLevel::warning, site, "Triton's cache entry {} is invalid ({}); {}, recompiling", files.cache_dir,
              *problem, moved.empty() ? "it was gone" : "set aside as " + moved);
  }
}

std::optional<StoredChoice> stored_choice(const KernelDescription& kernel, std::size_t layer, const std::string& key) {
  const KernelRecords* stored = records(kernel);
  if (stored == nullptr) return std::nullopt;
  const auto found = stored->find_choice(key);
  // The config list is part of the kernel's source, so the record's fingerprint (or the
  // bundle's identity check) covers it; the text is compared all the same.
  const auto& configs = kernel.layers.at(layer).configs;
  if (!found || found->first >= configs.size() || configs[found->first].text != found->second) return std::nullopt;
  return StoredChoice{found->first, stored->where()};
}

void store_choice(const KernelDescription& kernel, std::size_t layer, const std::string& key, std::size_t config) {
  if (const KernelRecords* stored = records(kernel))
    stored->put_choice(key, config, kernel.layers.at(layer).configs.at(config).text);
}

std::vector<std::string> stored_memo_entries(const KernelDescription& kernel, const std::string& key) {
  const KernelRecords* stored = records(kernel);
  return stored != nullptr ? stored->find_memo_entries(key) : std::vector<std::string>{};
}

bool store_memo_entry(const KernelDescription& kernel, const std::string& key, const std::string& entry) {
  const KernelRecords* stored = records(kernel);
  return stored != nullptr && stored->put_memo_entry(key, entry);
}

GilReleased::GilReleased() {
  const HostPython py = host_python();
  if (py.present() && py.is_initialized() && py.gil_check()) state_ = py.save_thread();
}

GilReleased::~GilReleased() {
  if (state_ != nullptr) host_python().restore_thread(state_);
}

std::vector<std::filesystem::path> files_for_triton(const Artifact& artifact) {
  return compiled_kernel_files(artifact);
}

}  // namespace tritonrt::detail

namespace tritonrt {

std::string triton_version() {
  // Asked once: the Triton a process imported stays.
  static const std::string version =
      detail::python_side({}, "the installed Triton's version is asked").rules->triton_version;
  return version;
}

std::string python_version() { return TRITONRT_PYTHON_VERSION; }

}  // namespace tritonrt

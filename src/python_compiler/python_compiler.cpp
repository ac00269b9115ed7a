#include "python_compiler/python_compiler.h"
#include "compiler/python_discovery.h"

#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "common/compile_options.h"
#include "common/errors.h"
#include "common/log.h"
#include "python_compiler/kinds/python_kinds.h"

namespace py = pybind11;

// The bridge's parts (src/python_compiler/bridge/*.py) as strings, in the order they are executed,
// generated at build time (cmake/embed_text.cmake).
extern const char* const kTritonrtBridge_names[];
extern const char* const kTritonrtBridge_sources[];
extern const std::size_t kTritonrtBridge_count;

namespace tritonrt::detail {
namespace {

// The interpreter tritonrt starts should see the same packages as the Python it was built
// against (a virtual environment's site-packages included): point its program name there.
// The interpreter tritonrt starts, in a process without Python (found at run time).
std::string python_program() { return embedded_python().program; }

bool started_interpreter = false;  // tritonrt started the interpreter (no host Python)

void ensure_interpreter() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (Py_IsInitialized()) return;  // the host process is Python: use its interpreter
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0;
    config.parse_argv = 0;
    const std::string program = python_program();
    PyStatus status = PyConfig_SetBytesString(&config, &config.program_name, program.c_str());
    if (PyStatus_Exception(status)) {
      PyConfig_Clear(&config);
      raise<PythonError>({}, "could not configure the embedded Python for {}", program);
    }
    try {
      py::initialize_interpreter(&config, 0, nullptr, false);
    } catch (const std::exception& e) {
      raise<PythonError>({}, "could not start the embedded Python ({}): {}", program, e.what());
    }
    started_interpreter = true;
    // The interpreter lives as long as the process; other threads take the GIL as needed.
    PyEval_SaveThread();
  });
}

// The package `_tritonrt_bridge`, made on first use: each part executed as its module
// `_tritonrt_bridge.<part>`, and what a part lists in __all__ offered by the package (the
// functions C++ calls). The parts share tritonrt's table of element types.
py::module_ make_bridge() {
  auto sys_modules = py::module_::import("sys").attr("modules");
  const auto module_type = py::module_::import("types").attr("ModuleType");
  py::module_ package = module_type("_tritonrt_bridge");
  package.attr("__path__") = py::list();  // a package, whose parts are in sys.modules
  sys_modules["_tritonrt_bridge"] = package;
  try {
    for (std::size_t i = 0; i < kTritonrtBridge_count; ++i) {
      const std::string name = kTritonrtBridge_names[i];
      py::module_ part = module_type("_tritonrt_bridge." + name);
      part.attr("__file__") = "<tritonrt bridge/" + name + ".py>";
      sys_modules[py::str("_tritonrt_bridge." + name)] = part;
      package.attr(name.c_str()) = part;
      py::exec(kTritonrtBridge_sources[i], part.attr("__dict__"));
      if (name == "common") {
        part.attr("embedded") = started_interpreter;
        for (int t = 0; t < kDTypeCount; ++t) {
          const auto type = static_cast<DType>(t);
          part.attr("dtypes")[py::str(std::string(to_string(type)))] =
              part.attr("DType")(std::string(language_name(type)), std::string(torch_name(type)), scalar_size(type));
        }
      }
      if (py::hasattr(part, "__all__")) {
        for (const auto exported : part.attr("__all__")) package.attr(exported) = part.attr(exported);
      }
    }
  } catch (...) {
    // A bridge that did not start whole is no bridge: the next call tries again.
    for (const auto key : py::list(sys_modules.attr("keys")())) {
      if (key.cast<std::string>().starts_with("_tritonrt_bridge")) sys_modules.attr("pop")(key);
    }
    throw;
  }
  return package;
}

py::module_ bridge_module() {
  auto sys_modules = py::module_::import("sys").attr("modules");
  if (sys_modules.contains("_tritonrt_bridge")) return sys_modules["_tritonrt_bridge"];
  return make_bridge();
}

// Python's own one-line text for the exception being handled ("ValueError: ..."), never a
// traceback; the bridge makes it safe to read whatever the exception is.
std::string one_line(py::error_already_set& e) {
  try {
    return bridge_module().attr("one_line")(e.value()).cast<std::string>();
  } catch (const std::exception&) {
    return "an exception whose text could not be read";
  }
}

// The text a bridge exception carries to show as it is after the one-line summary (Triton's
// message with its caret line, a kernel module's traceback), or "".
std::string details(py::error_already_set& e) {
  try {
    const py::object text = py::getattr(e.value(), "details", py::none());
    return py::isinstance<py::str>(text) ? text.cast<std::string>() : std::string();
  } catch (const std::exception&) {
    return {};
  }
}

// Re-raises a Python exception from the bridge as the matching tritonrt exception: its
// one-line summary first, then on the following lines whatever text it carries as written.
[[noreturn]] void rethrow(py::error_already_set& e, const ErrorSite& site, const std::string& doing) {
  const std::string type = e.type() ? py::str(e.type().attr("__name__")).cast<std::string>() : "";
  // The bridge's own exceptions carry their message alone; others read "Type: message".
  const bool ours =
      type == "KernelSourceError" || type == "KernelNotFoundError" || type == "TargetError" || type == "CompileFailure";
  std::string message = one_line(e);
  if (ours && message.starts_with(type + ": ")) message.erase(0, type.size() + 2);
  if (const std::string text = details(e); !text.empty()) message += "\n" + text;
  if (type == "KernelSourceError" || type == "KernelNotFoundError") raise<SourceError>(site, "{}: {}", doing, message);
  if (type == "TargetError") raise<TargetError>(site, "{}: {}", doing, message);
  if (type == "CompileFailure") raise<CompileError>(site, "{}: {}", doing, message);
  if (type == "ModuleNotFoundError" || type == "ImportError") {
    raise<PythonError>(site, "{}: {} (is triton installed for {}? set TRITONRT_PYTHON)", doing, message,
                       python_program());
  }
  raise<PythonError>(site, "{}: {}", doing, message);
}

py::object key_object(ParamSpec::Key key) {
  switch (key) {
    case ParamSpec::Key::none:
      return py::none();
    case ParamSpec::Key::plain:
      return py::str("");
    case ParamSpec::Key::divisible:
      return py::str("D");
    case ParamSpec::Key::one:
      return py::int_(1);
  }
  return py::none();
}

// A parameter's (type, key) for the bridge's compile: a constexpr's value encoded as
// constexpr_object encodes it; a tuple's types and keys as tuples of its elements'.
py::tuple spec_entry(const ParamSpec& spec, const Arg& value, const KernelDescription& kernel, std::size_t index) {
  if (!spec.is_tuple()) {
    return py::make_tuple(spec.type,
                          spec.type == "constexpr" ? constexpr_object(value, kernel, index) : key_object(spec.key));
  }
  const auto elements = value.elements();
  py::tuple types(spec.elements.size()), keys(spec.elements.size());
  for (std::size_t i = 0; i < spec.elements.size(); ++i) {
    const py::tuple entry = spec_entry(spec.elements[i], elements[i], kernel, index);
    types[i] = entry[0];
    keys[i] = entry[1];
  }
  return py::make_tuple(types, keys);
}

py::list python_args(const KernelDescription& kernel, const std::vector<PythonArg>& args) {
  py::list out;
  for (const auto& p : args) out.append(python_arg(kernel, p));
  return out;
}

py::list python_indices(const std::vector<std::size_t>& indices) {
  py::list out;
  for (const auto i : indices) out.append(py::int_(i));
  return out;
}

}  // namespace

PythonCompiler::PythonCompiler() { ensure_interpreter(); }

std::string PythonCompiler::import_triton() {
  py::gil_scoped_acquire gil;
  try {
    return bridge_module().attr("import_triton")().cast<std::string>();
  } catch (py::error_already_set& e) {
    rethrow(e, {}, "importing Triton");
  }
}

std::string PythonCompiler::specialization_rules() {
  py::gil_scoped_acquire gil;
  try {
    return bridge_module().attr("specialization_rules")().cast<std::string>();
  } catch (py::error_already_set& e) {
    rethrow(e, {}, "reading the installed Triton's specialization rules");
  }
}

int PythonCompiler::handle(const KernelDescription& kernel) {
  if (kernel.handle < 0) {
    // Described by the index: imported now, on the first call that needs Python.
    try {
      kernel.handle =
          bridge_module().attr("kernel_handle")(py::bytes(kernel.source), py::bytes(kernel.name)).cast<int>();
      if (kernel.imported_since != nullptr) kernel.imported_since->store(true);
    } catch (py::error_already_set& e) {
      rethrow(e, {kernel.name}, "loading it from '" + kernel.source + "'");
    }
  }
  return kernel.handle;
}

std::string PythonCompiler::kernel_dependencies(const KernelDescription& kernel) {
  py::gil_scoped_acquire gil;
  try {
    return bridge_module().attr("dependencies")(handle(kernel)).cast<std::string>();
  } catch (py::error_already_set& e) {
    rethrow(e, {kernel.signature.name}, "finding what it was made from");
  }
}

bool PythonCompiler::is_current(const KernelDescription& kernel) {
  py::gil_scoped_acquire gil;
  try {
    return bridge_module().attr("is_current")(kernel.handle).cast<bool>();
  } catch (py::error_already_set& e) {
    rethrow(e, {kernel.signature.name}, "checking that its module still holds it");
  }
}

std::string PythonCompiler::describe_kernel(std::string_view source, std::string_view name) {
  py::gil_scoped_acquire gil;
  try {
    // Bytes: a path need not be UTF-8 (the bridge decodes it as the file system does).
    return bridge_module()
        .attr("kernel_description")(py::bytes(source.data(), source.size()), py::bytes(name.data(), name.size()))
        .cast<std::string>();
  } catch (py::error_already_set& e) {
    rethrow(e, {name}, "loading it from '" + std::string(source) + "'");
  }
}

std::string PythonCompiler::describe_object(const void* object) {
  py::gil_scoped_acquire gil;
  const auto target = py::reinterpret_borrow<py::object>(static_cast<PyObject*>(const_cast<void*>(object)));
  try {
    return bridge_module().attr("object_kernel_description")(target).cast<std::string>();
  } catch (py::error_already_set& e) {
    rethrow(e, {}, "describing the kernel object it was handed");
  }
}

CompiledFiles PythonCompiler::compile(const KernelDescription& kernel, const Target& target,
                                      const CompileOptions& options, const std::vector<CompileParam>& params) {
  py::gil_scoped_acquire gil;
  CompiledFiles files;
  try {
    py::list spec;
    for (std::size_t i = 0; i < params.size(); ++i)
      spec.append(spec_entry(*params[i].spec, params[i].value, kernel, i));
    py::dict opts;
    for_each_option(options, [&](const char* name, const auto& value) {
      if (value) opts[name] = *value;
    });
    const py::tuple result =
        bridge_module().attr("compile")(handle(kernel), target.backend, target.arch, target.warp_size, spec, opts);
    files.metadata_json = result[0].cast<std::string>();
    files.binary = result[1].cast<std::string>();
    files.binary_kind = result[2].cast<std::string>();
    files.cache_dir = result[3].cast<std::string>();
    files.from_cache = result[4].cast<bool>();
  } catch (py::error_already_set& e) {
    if (e.matches(bridge_module().attr("CacheEntryError"))) {
      // The entry's folder and Triton's reason: the core sets it aside and compiles again.
      const py::tuple args = e.value().attr("args");
      files.cache_dir = args[0].cast<std::string>();
      files.unreadable = args[1].cast<std::string>();
      files.from_cache = true;
      return files;
    }
    if (e.matches(bridge_module().attr("CompileFailure"))) {
      // What the compiler printed while it failed (MLIR's IR dump, say): at debug level only.
      const py::tuple args = e.value().attr("args");
      if (args.size() > 1 && log_enabled(LogLevel::debug)) {
        log_about(LogLevel::debug, {kernel.signature.name}, "the compiler's output for {}:\n{}", target.str(),
                  args[1].cast<std::string>());
      }
    }
    rethrow(e, {kernel.signature.name}, "compiling for " + target.str());
  }
  return files;
}

std::string PythonCompiler::run_heuristic(const KernelDescription& kernel, std::size_t layer, const std::string& name,
                                          const std::vector<PythonArg>& args) {
  py::gil_scoped_acquire gil;
  try {
    return bridge_module()
        .attr("run_heuristic")(handle(kernel), layer, name, python_args(kernel, args))
        .cast<std::string>();
  } catch (py::error_already_set& e) {
    rethrow(e, {kernel.signature.name}, "heuristic '" + name + "' raised");
  }
}

std::vector<std::size_t> PythonCompiler::prune_configs(const KernelDescription& kernel, std::size_t layer,
                                                       const std::vector<PythonArg>& args,
                                                       const std::vector<std::size_t>& given) {
  py::gil_scoped_acquire gil;
  try {
    py::list names;
    for (const auto i : given) names.append(kernel.signature.params[i].name);
    return bridge_module()
        .attr("prune_configs")(handle(kernel), layer, python_args(kernel, args), names)
        .cast<std::vector<std::size_t>>();
  } catch (py::error_already_set& e) {
    rethrow(e, {kernel.signature.name}, "pruning the autotune configs");
  }
}

std::string PythonCompiler::run_hook(const KernelDescription& kernel, std::size_t layer, const char* which,
                                     const std::vector<PythonArg>& args, void* stream, std::ptrdiff_t config,
                                     bool reset_only, bool record) {
  py::gil_scoped_acquire gil;
  try {
    return bridge_module()
        .attr("run_hook")(handle(kernel), layer, which, python_args(kernel, args),
                          py::int_(reinterpret_cast<std::uintptr_t>(stream)), config, reset_only, record)
        .cast<std::string>();
  } catch (py::error_already_set& e) {
    rethrow(e, {kernel.signature.name},
            std::string("the autotuner's ") + (std::string(which) == "config" ? "config pre_hook" : which) + " raised");
  }
}

std::optional<std::vector<std::optional<std::vector<double>>>> PythonCompiler::read_tuning(
    const KernelDescription& kernel, std::size_t layer, const Target& target, const std::vector<Arg>& key,
    const std::vector<std::size_t>& configs) {
  py::gil_scoped_acquire gil;
  try {
    const py::object found = bridge_module().attr("read_tuning")(
        handle(kernel), layer, target.backend, target.arch, target.warp_size, python_key(key), python_indices(configs));
    if (found.is_none()) return std::nullopt;
    return found.cast<std::vector<std::optional<std::vector<double>>>>();
  } catch (py::error_already_set& e) {
    rethrow(e, {kernel.signature.name}, "reading a persisted tuning result");
  }
}

void PythonCompiler::write_tuning(const KernelDescription& kernel, std::size_t layer, const Target& target,
                                  const std::vector<Arg>& key, const std::vector<std::size_t>& configs,
                                  const std::vector<std::vector<double>>& timings) {
  py::gil_scoped_acquire gil;
  try {
    bridge_module().attr("write_tuning")(handle(kernel), layer, target.backend, target.arch, target.warp_size,
                                         python_key(key), python_indices(configs), timings);
  } catch (py::error_already_set& e) {
    rethrow(e, {kernel.signature.name}, "persisting a tuning result");
  }
}

TunerChoice PythonCompiler::remembered_choice(const KernelDescription& kernel, std::size_t layer,
                                              const std::vector<Arg>& key) {
  py::gil_scoped_acquire gil;
  try {
    // (config index or None, whether the tuner's own run tunes a key it lacks)
    const auto found =
        bridge_module().attr("remembered_choice")(handle(kernel), layer, python_key(key)).cast<py::tuple>();
    TunerChoice choice;
    if (!found[0].is_none()) choice.config = found[0].cast<std::size_t>();
    choice.own_run_tunes = found[1].cast<bool>();
    return choice;
  } catch (py::error_already_set& e) {
    rethrow(e, {kernel.signature.name}, "reading its tuner's choices");
  }
}

void PythonCompiler::remember_choice(const KernelDescription& kernel, std::size_t layer, const std::vector<Arg>& key,
                                     std::size_t config, const TuningTimes* timed) {
  py::gil_scoped_acquire gil;
  try {
    py::object times = py::none();
    if (timed != nullptr) times = py::make_tuple(python_indices(timed->configs), timed->timings, timed->seconds);
    bridge_module().attr("remember_choice")(handle(kernel), layer, python_key(key), config, times);
  } catch (py::error_already_set& e) {
    rethrow(e, {kernel.signature.name}, "keeping a tuning choice in its tuner");
  }
}

}  // namespace tritonrt::detail

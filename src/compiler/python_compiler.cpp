#include "compiler/python_compiler.h"

#include <pybind11/embed.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>

#include "common/compile_options.h"
#include "common/errors.h"

namespace py = pybind11;

// bridge.py as a string, generated at build time (cmake/embed_text.cmake).
extern const char kTritonrtBridgeSource[];

namespace tritonrt::detail {
namespace {

// The interpreter tritonrt starts should see the same packages as the Python it was built
// against (a virtual environment's site-packages included): point its program name there.
std::string python_program() {
  if (const char* p = std::getenv("TRITONRT_PYTHON"); p && *p) return p;
  if (const char* venv = std::getenv("VIRTUAL_ENV"); venv && *venv) {
    const auto candidate = std::filesystem::path(venv) / "bin" / "python3";
    if (std::filesystem::exists(candidate)) return candidate.string();
  }
  return TRITONRT_DEFAULT_PYTHON;
}

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
      raise<PythonError>({}, "could not configure the embedded Python for " + program);
    }
    try {
      py::initialize_interpreter(&config, 0, nullptr, false);
    } catch (const std::exception& e) {
      raise<PythonError>({}, "could not start the embedded Python (" + program + "): " + e.what());
    }
    // The interpreter lives as long as the process; other threads take the GIL as needed.
    PyEval_SaveThread();
  });
}

py::module_ bridge_module() {
  auto sys_modules = py::module_::import("sys").attr("modules");
  if (sys_modules.contains("_tritonrt_bridge")) return sys_modules["_tritonrt_bridge"];
  py::module_ module = py::module_::import("types").attr("ModuleType")("_tritonrt_bridge");
  module.attr("__file__") = "<tritonrt bridge.py>";
  sys_modules["_tritonrt_bridge"] = module;
  py::exec(kTritonrtBridgeSource, module.attr("__dict__"));
  return module;
}

// Re-raises a Python exception from the bridge as the matching tritonrt exception.
[[noreturn]] void rethrow(py::error_already_set& e, const ErrorSite& site, const std::string& doing) {
  const std::string type = py::str(e.type().attr("__name__"));
  const std::string message = doing + ": " + py::str(e.value()).cast<std::string>();
  if (type == "KernelSourceError" || type == "KernelNotFoundError") raise<SourceError>(site, message);
  if (type == "TargetError") raise<TargetError>(site, message);
  if (type == "CompileFailure") raise<CompileError>(site, message);
  if (type == "ModuleNotFoundError" || type == "ImportError") {
    raise<PythonError>(site, message + " (is triton installed for " + python_program() + "? set TRITONRT_PYTHON)");
  }
  raise<PythonError>(site, message + " [" + type + "]\n" + e.what());
}

std::optional<Arg> default_arg(const nlohmann::json& d, std::string& storage) {
  const auto kind = d.at("kind").get<std::string>();
  Arg a;
  if (kind == "absent") return std::nullopt;
  if (kind == "none") {
    a.kind = ArgKind::none;
  } else if (kind == "bool") {
    a.kind = ArgKind::boolean;
    a.value.u = d.at("value").get<bool>() ? 1 : 0;
  } else if (kind == "int") {
    const auto& v = d.at("value");
    if (v.is_number_unsigned()) {
      a.kind = ArgKind::uint;
      a.value.u = v.get<std::uint64_t>();
    } else {
      a.kind = ArgKind::sint;
      a.value.i = v.get<std::int64_t>();
    }
  } else if (kind == "float") {
    a.kind = ArgKind::real;
    a.value.f = d.at("value").get<double>();
  } else if (kind == "str") {
    storage = d.at("value").get<std::string>();
    a.kind = ArgKind::string;
  } else {
    a.kind = ArgKind::python_default;
  }
  return a;
}

py::object key_object(ParamSpec::Key key) {
  switch (key) {
    case ParamSpec::Key::none: return py::none();
    case ParamSpec::Key::plain: return py::str("");
    case ParamSpec::Key::divisible: return py::str("D");
    case ParamSpec::Key::one: return py::int_(1);
  }
  return py::none();
}

py::object constexpr_object(const Arg& a) {
  switch (a.kind) {
    case ArgKind::none: return py::make_tuple("value", py::none());
    case ArgKind::boolean: return py::make_tuple("value", py::bool_(a.value.u != 0));
    case ArgKind::sint: return py::make_tuple("value", py::int_(a.value.i));
    case ArgKind::uint: return py::make_tuple("value", py::int_(a.value.u));
    case ArgKind::real: return py::make_tuple("value", py::float_(a.value.f));
    case ArgKind::string: return py::make_tuple("value", py::str(a.value.s, a.size));
    case ArgKind::dtype: return py::make_tuple("dtype", std::string(language_name(a.dtype)));
    case ArgKind::python_default: return py::make_tuple("default");
    default: raise<ArgumentError>({}, "internal error: " + describe(a) + " is not a constexpr value");
  }
}

}  // namespace

}  // namespace tritonrt::detail

extern "C" tritonrt::detail::Compiler* tritonrt_make_compiler() {
  static tritonrt::detail::PythonCompiler compiler;
  return &compiler;
}

namespace tritonrt::detail {

PythonCompiler::PythonCompiler() {
  ensure_interpreter();
  py::gil_scoped_acquire gil;
  try {
    py::list names;
    for (int i = 0; i < kDTypeCount; ++i) names.append(std::string(language_name(static_cast<DType>(i))));
    const auto answer = nlohmann::json::parse(bridge_module().attr("specialization_rules")(names).cast<std::string>());
    rules_.triton_version = answer.at("triton_version").get<std::string>();
    auto dtype = [&](const char* key) {
      const auto name = answer.at(key).get<std::string>();
      const auto t = parse_dtype(name);
      if (!t) raise<PythonError>({}, "Triton " + rules_.triton_version + " names an unknown type '" + name + "' for " + key);
      return *t;
    };
    rules_.bool_type = dtype("bool_type");
    rules_.float_type = dtype("float_type");
    rules_.int_one_is_constexpr = answer.at("int_one_is_constexpr").get<bool>();
    rules_.int_divisibility = answer.at("int_divisibility").get<std::int64_t>();
    rules_.pointer_divisibility = answer.at("pointer_divisibility").get<std::int64_t>();
    const auto& pointers = answer.at("pointer_types");
    for (int i = 0; i < kDTypeCount; ++i) {
      rules_.pointer_types[i] = {pointers.at(i).at(0).get<std::string>(), pointers.at(i).at(1).get<std::string>()};
    }
  } catch (py::error_already_set& e) {
    rethrow(e, {}, "reading the installed Triton's specialization rules");
  }
}

LoadedKernel PythonCompiler::load_kernel(std::string_view source, std::string_view name) {
  py::gil_scoped_acquire gil;
  nlohmann::json info;
  try {
    info = nlohmann::json::parse(
        bridge_module().attr("load_kernel")(std::string(source), std::string(name)).cast<std::string>());
  } catch (py::error_already_set& e) {
    rethrow(e, {name}, "loading it from '" + std::string(source) + "'");
  }
  LoadedKernel k;
  k.handle = info.at("handle").get<int>();
  auto& sig = k.signature;
  sig.name = info.at("name").get<std::string>();
  sig.full_name = info.at("full_name").get<std::string>();
  sig.file = info.at("file").is_string() ? info.at("file").get<std::string>() : std::string();
  const auto& params = info.at("params");
  k.default_strings.resize(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& p = params[i];
    ParamInfo pi;
    pi.name = p.at("name").get<std::string>();
    pi.is_constexpr = p.at("is_constexpr").get<bool>();
    pi.is_const = p.at("is_const").get<bool>();
    pi.do_not_specialize = p.at("do_not_specialize").get<bool>();
    pi.do_not_specialize_on_alignment = p.at("do_not_specialize_on_alignment").get<bool>();
    pi.annotation_type = p.at("annotation_type").get<std::string>();
    pi.has_default = p.at("default").at("kind").get<std::string>() != "absent";
    if (pi.has_default) pi.default_repr = p.at("default").at("repr").get<std::string>();
    ParamRule rule;
    rule.is_constexpr = pi.is_constexpr;
    rule.is_const = pi.is_const;
    rule.specialize = !pi.do_not_specialize;
    rule.align = !pi.do_not_specialize_on_alignment;
    if (!pi.annotation_type.empty() && !pi.is_constexpr) {
      rule.annotated = parse_type_code(pi.annotation_type);
      if (!rule.annotated) {
        raise<SourceError>({sig.name, pi.name, static_cast<std::ptrdiff_t>(i)},
                           "annotation '" + pi.annotation_type + "' names a type tritonrt does not know");
      }
    }
    k.defaults.push_back(default_arg(p.at("default"), k.default_strings[i]));
    sig.params.push_back(std::move(pi));
    k.param_rules.push_back(rule);
  }
  // String defaults point into default_strings, which no longer moves.
  for (std::size_t i = 0; i < params.size(); ++i) {
    auto& d = k.defaults[i];
    if (d && d->kind == ArgKind::string) {
      d->value.s = k.default_strings[i].data();
      d->size = k.default_strings[i].size();
    }
  }
  if (const auto& at = info.at("autotune"); !at.is_null()) {
    sig.autotuned = true;
    sig.autotune_configs = at.at("configs").get<std::size_t>();
  }
  sig.heuristic_params = info.at("heuristics").get<std::vector<std::string>>();
  return k;
}

Artifact PythonCompiler::compile(const LoadedKernel& kernel, const Target& target, const CompileOptions& options,
                               const std::vector<CompileParam>& params) {
  py::gil_scoped_acquire gil;
  Artifact artifact;
  try {
    py::list spec;
    for (const auto& p : params) {
      if (p.type == "constexpr") {
        spec.append(py::make_tuple(p.type, constexpr_object(p.value)));
      } else {
        spec.append(py::make_tuple(p.type, key_object(p.key)));
      }
    }
    py::dict opts;
    for_each_option(options, [&](const char* name, const auto& value) {
      if (value) opts[name] = *value;
    });
    py::dict result = bridge_module().attr("compile")(kernel.handle, target.backend, target.arch,
                                                      target.warp_size, spec, opts);
    artifact.metadata = KernelMetadata::parse(result["metadata"].cast<std::string>());
    artifact.binary = result["binary"].cast<std::string>();
    artifact.binary_kind = result["binary_ext"].cast<std::string>();
    artifact.cache_dir = result["cache_dir"].cast<std::string>();
  } catch (py::error_already_set& e) {
    rethrow(e, {kernel.signature.name}, "compiling for " + target.str());
  }
  return artifact;
}

}  // namespace tritonrt::detail

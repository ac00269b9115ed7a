#include "store/index_environment.h"

#include <algorithm>
#include <cstdlib>

#include "store/module_search.h"

extern char** environ;

namespace tritonrt::detail {
namespace {

// Variables of those prefixes that only say where Triton keeps or shows things: changing them
// changes no compiled kernel.
// (Not TRITON_HOME: with TRITON_KERNEL_OVERRIDE it picks the folder of kernels compiled in.)
constexpr std::string_view kPlaceVariables[] = {"TRITON_CACHE_DIR", "TRITON_DUMP_DIR", "TRITON_CACHE_MANAGER",
                                                "TRITON_REMOTE_CACHE_BACKEND", "TRITON_PRINT_AUTOTUNING"};

// What decides which file `import package.module` finds, besides the files along its search
// path: PYTHONPATH, and the variables that choose the Python environment. The latter are
// compared only where set: a process with no Python environment (a deployed program) cannot
// import anything, and the file recorded stays what it gets.
constexpr std::string_view kSearchPathVariable = "PYTHONPATH";
constexpr std::string_view kEnvironmentChoosers[] = {"PYTHONHOME", "TRITONRT_PYTHON", "VIRTUAL_ENV", "CONDA_PREFIX"};

// PYTHONPATH with each folder made absolute, as Python's site module makes sys.path's.
std::string absolute_search_path(std::string_view list) {
  std::string out;
  for (const std::string& folder : search_path_folders(list)) out += (out.empty() ? "" : ":") + folder;
  return out;
}

bool is_place_variable(std::string_view name) {
  return std::find(std::begin(kPlaceVariables), std::end(kPlaceVariables), name) != std::end(kPlaceVariables);
}

bool is_chooser(std::string_view name) {
  return std::find(std::begin(kEnvironmentChoosers), std::end(kEnvironmentChoosers), name) !=
         std::end(kEnvironmentChoosers);
}

}  // namespace

Environment recorded_environment(std::string_view source, const Environment& observed) {
  Environment out;
  for (const auto& [name, value] : observed) {
    if (is_place_variable(name)) continue;
    const char* now = std::getenv(name.c_str());
    out.emplace(name, now ? std::optional<std::string>(now) : std::nullopt);
  }
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    const auto name = entry.substr(0, eq);
    if (is_place_variable(name)) continue;
    if (name.starts_with("TRITON_") || name.starts_with("MLIR_") || name.starts_with("LLVM_")) {
      out.insert_or_assign(std::string(name), std::string(entry.substr(eq + 1)));
    }
  }
  if (!source.ends_with(".py")) {
    if (const char* value = std::getenv(kSearchPathVariable.data())) {
      out.insert_or_assign(std::string(kSearchPathVariable), absolute_search_path(value));
    }
    for (const auto variable : kEnvironmentChoosers) {
      if (const char* value = std::getenv(variable.data()); value && *value) {
        out.insert_or_assign(std::string(variable), std::string(value));
      }
    }
  }
  return out;
}

std::string changed_variable(const Environment& then, std::string_view source) {
  const Environment now = recorded_environment(source, then);
  for (const auto& [variable, value] : now) {
    const auto it = then.find(variable);
    const std::optional<std::string> was = it == then.end() ? std::nullopt : it->second;
    if (was == value || (is_chooser(variable) && (!value || value->empty()))) continue;
    const auto shown = [](const std::optional<std::string>& v) { return v ? "'" + *v + "'" : std::string("unset"); };
    return variable + " changed (" + shown(was) + " then, " + shown(value) + " now)";
  }
  return "";
}

}  // namespace tritonrt::detail

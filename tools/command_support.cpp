#include "command_support.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace tritonrt::cli {

void usage_error(const std::string& message) { throw UsageError(message); }

std::vector<Arg> parse_call(const std::string& signature, SignatureStorage& storage, const std::string& where) {
  try {
    return parse_signature(signature, storage);
  } catch (const SignatureError& e) {
    usage_error(where + e.what());
  }
}

bool is_autotuned(JitFunction& fn) {
  const auto& decorators = fn.signature().decorators;
  return std::any_of(decorators.begin(), decorators.end(),
                     [](const auto& d) { return d.kind == Decorator::Kind::autotune; });
}

void search_current_folder_first() {
  if (const char* safe = std::getenv("PYTHONSAFEPATH"); safe != nullptr && *safe != '\0') return;
  std::error_code ec;
  const std::filesystem::path here = std::filesystem::current_path(ec);
  if (ec) return;
  std::string value = here.string();
  if (const char* before = std::getenv("PYTHONPATH"); before != nullptr && *before != '\0')
    value += ":" + std::string(before);
  ::setenv("PYTHONPATH", value.c_str(), 1);
}

bool names_a_module(const std::string& source) {
  return !source.ends_with(".py") && source.find('/') == std::string::npos;
}

}  // namespace tritonrt::cli

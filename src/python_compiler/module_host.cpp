// The compiler module's entry point, and its side of CompilerHost (compiler/module_abi.h): the module's
// copies of the stateless helpers call the log and Python discovery by their usual names, and
// these definitions hand each call to the core that loaded the module.

#include "common/log.h"
#include "python_compiler/python_compiler.h"
#include "compiler/python_discovery.h"

namespace tritonrt::detail {
namespace {

const CompilerHost* host = nullptr;

}  // namespace

void write_log(LogLevel level, std::string_view message) { host->write_log(level, message); }

const EmbeddedPython& embedded_python() { return host->embedded_python(); }

}  // namespace tritonrt::detail

namespace tritonrt {

LogLevel log_level() noexcept { return detail::host->log_level(); }

}  // namespace tritonrt

extern "C" tritonrt::detail::Compiler* tritonrt_make_compiler(const tritonrt::detail::CompilerHost* host) {
  tritonrt::detail::host = host;
  static tritonrt::detail::PythonCompiler compiler;
  return &compiler;
}

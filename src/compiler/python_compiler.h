// The compiler module's implementation of Compiler (see compiler.h): the only code that
// touches Python. It starts an interpreter when the process has none, holds the GIL only
// inside its own calls, and talks to bridge.py, compiled into the module as a string.
#pragma once

#include "compiler/compiler.h"

namespace tritonrt::detail {

class PythonCompiler final : public Compiler {
 public:
  PythonCompiler();
  std::string describe_kernel(std::string_view source, std::string_view name) override;
  std::string specialization_rules() override;
  CompiledFiles compile(const LoadedKernel& kernel, const Target& target, const CompileOptions& options,
                        const std::vector<CompileParam>& params) override;
};

}  // namespace tritonrt::detail

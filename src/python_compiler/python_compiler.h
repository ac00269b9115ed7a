// The compiler module's implementation of Compiler (compiler/module_abi.h): the only code that
// touches Python. It starts an interpreter when the process has none, holds the GIL only
// inside its own calls, and talks to the bridge (python_compiler/bridge/*.py), compiled into the module as strings.
#pragma once

#include "compiler/module_abi.h"

namespace tritonrt::detail {

class PythonCompiler final : public Compiler {
 public:
  PythonCompiler();
  std::string describe_kernel(std::string_view source, std::string_view name) override;
  std::string describe_object(const void* object) override;
  std::string import_triton() override;
  std::string specialization_rules() override;
  std::string kernel_dependencies(const KernelDescription& kernel) override;
  bool is_current(const KernelDescription& kernel) override;
  CompiledFiles compile(const KernelDescription& kernel, const Target& target, const CompileOptions& options,
                        const std::vector<CompileParam>& params) override;
  std::string run_heuristic(const KernelDescription& kernel, std::size_t layer, const std::string& name,
                            const std::vector<PythonArg>& args) override;
  std::vector<std::size_t> prune_configs(const KernelDescription& kernel, std::size_t layer,
                                         const std::vector<PythonArg>& args,
                                         const std::vector<std::size_t>& given) override;
  std::string run_hook(const KernelDescription& kernel, std::size_t layer, const char* which,
                       const std::vector<PythonArg>& args, void* stream, std::ptrdiff_t config, bool reset_only,
                       bool record) override;
  std::optional<std::vector<std::optional<std::vector<double>>>> read_tuning(
      const KernelDescription& kernel, std::size_t layer, const Target& target, const std::vector<Arg>& key,
      const std::vector<std::size_t>& configs) override;
  void write_tuning(const KernelDescription& kernel, std::size_t layer, const Target& target,
                    const std::vector<Arg>& key, const std::vector<std::size_t>& configs,
                    const std::vector<std::vector<double>>& timings) override;
  TunerChoice remembered_choice(const KernelDescription& kernel, std::size_t layer,
                                const std::vector<Arg>& key) override;
  void remember_choice(const KernelDescription& kernel, std::size_t layer, const std::vector<Arg>& key,
                       std::size_t config, const TuningTimes* timed) override;

 private:
  /// The bridge's handle for the kernel, importing it first when it came from the index
  /// (the GIL held).
  int handle(const KernelDescription& kernel);
};

}  // namespace tritonrt::detail

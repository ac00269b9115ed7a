// The C++ half of the compiler layer: the only code that touches Python. It starts an
// interpreter when the process has none, holds the GIL only inside its own calls, and
// talks to bridge.py, which is compiled into the library as a string.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "function/specializer.h"
#include "tritonrt/artifact.h"
#include "tritonrt/jit_function.h"
#include "tritonrt/options.h"

namespace tritonrt::detail {

/// A kernel imported into the interpreter.
struct LoadedKernel {
  int handle = -1;
  KernelSignature signature;
  std::vector<ParamRule> rules;
  std::vector<std::optional<Arg>> defaults;   ///< Arg form of each Python default, if any
  std::vector<std::string> default_strings;  ///< storage behind string defaults
};

/// One parameter of a compile request: its specialization and, for constexprs, the value.
struct CompileParam {
  std::string type;
  ParamSpec::Key key = ParamSpec::Key::none;
  Arg value;  ///< constexpr parameters only
};

/// Lets go of the GIL for its lifetime if the calling thread holds it, so that waiting on a
/// lock another thread holds while it compiles (and needs the GIL) cannot deadlock.
class GilReleased {
 public:
  GilReleased();
  ~GilReleased();
  GilReleased(const GilReleased&) = delete;
  GilReleased& operator=(const GilReleased&) = delete;

 private:
  void* state_ = nullptr;
};

class PythonBridge {
 public:
  /// The process's bridge; starts Python on first use when the host has none.
  static PythonBridge& get();

  LoadedKernel load_kernel(std::string_view source, std::string_view name);
  const SpecializationRules& rules() const { return rules_; }
  Artifact compile(const LoadedKernel& kernel, const Target& target, const CompileOptions& options,
                   const std::vector<CompileParam>& params);

 private:
  PythonBridge();
  SpecializationRules rules_;
};

}  // namespace tritonrt::detail

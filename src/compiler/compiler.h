// The compiler layer as the rest of libtritonrt sees it. Its implementation, the only code
// that touches Python, lives in the module libtritonrt_python.so, loaded on first use: the
// core links no libpython, so inside a Python process the module binds to that process's
// interpreter (one CPython, also where python is statically linked), and elsewhere the core
// loads the libpython it was built against first.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/specialization.h"
#include "tritonrt/artifact.h"
#include "tritonrt/options.h"
#include "tritonrt/signature.h"

namespace tritonrt::detail {

/// A kernel imported into the interpreter.
struct LoadedKernel {
  int handle = -1;
  KernelSignature signature;
  std::vector<ParamRule> param_rules;  ///< per parameter, in the specializer's compact form
  std::vector<std::optional<Arg>> defaults;   ///< Arg form of each Python default, if any
  std::vector<std::string> default_strings;  ///< storage behind string defaults
};

/// One parameter of a compile request: its specialization and, for constexprs, the value.
struct CompileParam {
  std::string type;
  ParamSpec::Key key = ParamSpec::Key::none;
  Arg value;  ///< constexpr parameters only
};

class Compiler {
 public:
  virtual ~Compiler() = default;
  /// Imports `source` once and reads kernel `name`'s static signature; throws SourceError.
  virtual LoadedKernel load_kernel(std::string_view source, std::string_view name) = 0;
  /// How the installed Triton specializes values.
  virtual const SpecializationRules& rules() const = 0;
  /// Compiles one specialization; throws CompileError or TargetError.
  virtual Artifact compile(const LoadedKernel& kernel, const Target& target, const CompileOptions& options,
                           const std::vector<CompileParam>& params) = 0;

  /// The process's compiler: loads the module (and libpython where the process has none).
  static Compiler& get();
};

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

/// The module's entry point (C linkage, found with dlsym).
extern "C" tritonrt::detail::Compiler* tritonrt_make_compiler();

// The compiler layer as the rest of libtritonrt sees it. The Python half, the only code that
// touches Python, lives in the module libtritonrt_python.so (python_compiler.cpp), loaded on
// first use: the core links no libpython, so inside a Python process the module binds to
// that process's interpreter, and elsewhere the core first loads the libpython it was built
// against (after checking its version). What the module answers is parsed and checked here.
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
  std::vector<std::optional<Arg>> defaults;  ///< Arg form of each Python default, if any
  std::vector<std::string> default_strings;  ///< storage behind string defaults
};

/// One parameter of a compile request: its specialization and, for constexprs, the value.
struct CompileParam {
  std::string type;
  ParamSpec::Key key = ParamSpec::Key::none;
  Arg value;  ///< constexpr parameters only
};

/// Triton's files for one compiled kernel, as the module found them; unchecked.
struct CompiledFiles {
  std::string metadata_json;
  std::string binary;
  std::string binary_kind;  ///< "cubin" or "hsaco"
  std::string cache_dir;    ///< Triton's cache folder holding them
  std::string unreadable;   ///< why Triton could not read its cache entry (then the rest is empty)
};

/// The module's interface: answers straight from the bridge, parsed by the functions below.
class Compiler {
 public:
  virtual ~Compiler() = default;
  /// Imports `source` once and describes kernel `name` (JSON); throws SourceError.
  virtual std::string describe_kernel(std::string_view source, std::string_view name) = 0;
  /// How the installed Triton specializes values (JSON).
  virtual std::string specialization_rules() = 0;
  /// Compiles one specialization; throws CompileError or TargetError.
  virtual CompiledFiles compile(const LoadedKernel& kernel, const Target& target, const CompileOptions& options,
                                const std::vector<CompileParam>& params) = 0;

  /// The process's compiler: loads the module (and libpython where the process has none).
  static Compiler& get();
};

/// Kernel `name` of `source`, imported once per source; throws SourceError.
LoadedKernel load_kernel(std::string_view source, std::string_view name);

/// The bridge's description of a kernel (JSON) in C++ form; a malformed description is a
/// PythonError naming what is wrong.
LoadedKernel parse_kernel_description(std::string_view json);

/// How the installed Triton specializes values, asked once.
const SpecializationRules& specialization_rules();

/// The bridge's answer about the specialization rules (JSON) in C++ form.
SpecializationRules parse_specialization_rules(std::string_view json);

/// Compiles one specialization and checks the result: an entry of Triton's cache that is
/// unreadable or invalid (src/store) is set aside and compiled once more; still invalid is
/// an ArtifactError.
Artifact compile(const LoadedKernel& kernel, const Target& target, const CompileOptions& options,
                 const std::vector<CompileParam>& params);

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

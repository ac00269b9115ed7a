// A kernel's static signature, read once from its Python definition, with the decorators
// around it (@triton.autotune, @triton.heuristics, libraries' own wrappers).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tritonrt {

/// The most parameters a kernel may have (JitFunction::get refuses one with more).
inline constexpr std::size_t kMaxParams = 256;

/// The static description of one kernel parameter, read from the Python signature.
struct ParamInfo {
  std::string name{};
  bool is_constexpr = false;
  bool is_const = false;  ///< annotated `const` pointer: Triton types it "*k..."
  bool do_not_specialize = false;
  bool do_not_specialize_on_alignment = false;
  std::string annotation_type{};  ///< the annotated Triton type ("i64", "*fp16"), "" when none
  bool has_default = false;
  std::string default_repr{};  ///< repr() of the default, when there is one
  /// Set by a decorator (an autotune config or a heuristic): the caller does not pass it.
  bool set_by_decorator = false;
};

/// One decorator around the @triton.jit function.
struct Decorator {
  enum class Kind { autotune, heuristics, wrapper };
  Kind kind = Kind::wrapper;
  std::string type{};                ///< its Python class: "Autotuner", "Heuristics", "LibEntry", ...
  std::vector<std::string> names{};  ///< autotune: the tuning key's names; heuristics: the names it sets
  std::size_t configs = 0;           ///< autotune: how many configs it tries
};

/// The static signature of a kernel.
struct KernelSignature {
  std::string name{};       ///< the function's name
  std::string full_name{};  ///< module.qualname
  std::string file{};       ///< the Python file it was defined in
  std::vector<ParamInfo> params{};
  /// The decorators around the function, outermost first (empty for a bare @triton.jit).
  /// A call passes, in order, the parameters that none of them sets.
  std::vector<Decorator> decorators{};
};

}  // namespace tritonrt

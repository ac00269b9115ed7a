// A kernel's static signature, read once from its Python definition.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tritonrt {

/// The static description of one kernel parameter, read from the Python signature.
struct ParamInfo {
  std::string name{};
  bool is_constexpr = false;
  bool is_const = false;  ///< annotated `const` pointer: Triton types it "*k..."
  bool do_not_specialize = false;
  bool do_not_specialize_on_alignment = false;
  std::string annotation_type{};  ///< the annotated Triton type ("i64", "*fp16"), "" when none
  bool has_default = false;
  std::string default_repr{};     ///< repr() of the default, when there is one
};

/// The static signature of a kernel.
struct KernelSignature {
  std::string name{};       ///< the function's name
  std::string full_name{};  ///< module.qualname
  std::string file{};       ///< the Python file it was defined in
  std::vector<ParamInfo> params{};
  bool autotuned = false;                         ///< wrapped in @triton.autotune
  std::size_t autotune_configs = 0;
  std::vector<std::string> heuristic_params{};    ///< set by @triton.heuristics
};

}  // namespace tritonrt

#include "common/compile_options.h"

namespace tritonrt::detail {

CompileOptions effective_options(const CompileOptions& given, const Target& target) {
  CompileOptions out = given;
  const bool hip = target.backend == "hip";
  out.num_warps = given.num_warps.value_or(4);
  out.num_stages = given.num_stages.value_or(hip ? 2 : 3);
  out.num_ctas = given.num_ctas.value_or(1);
  if (!hip) out.launch_pdl = given.launch_pdl.value_or(false);  // HIP's options have no launch_pdl
  out.launch_cooperative_grid = given.launch_cooperative_grid.value_or(false);
  return out;
}

std::string options_words(const CompileOptions& options) {
  std::string out;
  for_each_option(options, [&](const char* name, const auto& value) {
    if (!value) return;
    out += out.empty() ? "" : ", ";
    out += name;
    out += '=';
    if constexpr (std::is_same_v<std::decay_t<decltype(*value)>, bool>) {
      out += *value ? "true" : "false";
    } else {
      out += std::to_string(*value);
    }
  });
  return out.empty() ? "defaults" : out;
}

}  // namespace tritonrt::detail

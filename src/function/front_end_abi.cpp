// The core's side of src/function/front_end_abi.h.

#include "function/front_end_abi.h"

#include "compiler/compiler.h"

namespace tritonrt::detail {

struct FrontEndAccess {
  static JitFunction& live_kernel(std::string_view source, std::string_view name) {
    return JitFunction::get(source, name, true);
  }
  static const Artifact& launch(JitFunction& fn, const LaunchConfig& config, std::span<const Arg> args) {
    return fn.launch_artifact(config, args);
  }
};

}  // namespace tritonrt::detail

extern "C" const tritonrt::detail::FrontEndApi* tritonrt_front_end_api(std::uint32_t version) {
  using tritonrt::detail::FrontEndAccess, tritonrt::detail::FrontEndApi;
  static constexpr FrontEndApi api{FrontEndApi::kVersion, &FrontEndAccess::live_kernel, &FrontEndAccess::launch,
                                   &tritonrt::detail::files_for_triton};
  return version == FrontEndApi::kVersion ? &api : nullptr;
}

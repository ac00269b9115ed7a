#include "store/kernel_names.h"

#include <filesystem>
#include <system_error>

namespace tritonrt::detail {

std::string bundle_identity(std::string_view source, std::string_view name) {
  std::string_view module = source;
  if (module.ends_with(".py")) {
    module.remove_suffix(3);
    if (const auto slash = module.rfind('/'); slash != std::string_view::npos) module.remove_prefix(slash + 1);
  } else if (const auto dot = module.rfind('.'); dot != std::string_view::npos) {
    module.remove_prefix(dot + 1);
  }
  return std::string(module) + ":" + std::string(name);
}

bool names_kernel(std::string_view wanted, std::string_view source, std::string_view name) {
  const auto colon = wanted.rfind(':');
  if (colon == std::string_view::npos) return wanted == name;
  const std::string_view wanted_source = wanted.substr(0, colon), wanted_name = wanted.substr(colon + 1);
  if (!wanted_source.ends_with(".py")) return bundle_identity(wanted_source, wanted_name) == bundle_identity(source, name);
  std::error_code ec, ec2;
  return wanted_name == name && std::filesystem::weakly_canonical(wanted_source, ec) ==
                                    std::filesystem::weakly_canonical(source, ec2);
}

}  // namespace tritonrt::detail

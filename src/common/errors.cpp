#include "common/errors.h"

namespace tritonrt::detail {

std::string error_message(const ErrorSite& site, std::string_view what) {
  std::string text = "tritonrt: ";
  if (!site.kernel.empty()) {
    text.append("kernel '").append(site.kernel).append("'");
    if (!site.param.empty()) {
      text.append(", parameter '").append(site.param).append("'");
      if (site.index >= 0) text.append(" (#").append(std::to_string(site.index)).append(")");
    }
    text.append(": ");
  }
  return text.append(what);
}

}  // namespace tritonrt::detail

#include "common/errors.h"

#include <cstdio>

namespace tritonrt::detail {
namespace {

// Text as it may be printed: control bytes (a NUL would end the message) escaped.
std::string printable(std::string_view name) {
  std::string out;
  for (const char c : name) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\n' && c != '\t') || byte == 0x7f) {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string error_message(const ErrorSite& site, std::string_view what) {
  std::string text = "tritonrt: ";
  if (!site.kernel.empty()) {
    text.append("kernel '").append(printable(site.kernel)).append("'");
    if (!site.param.empty()) {
      text.append(", parameter '").append(printable(site.param)).append("'");
      if (site.index >= 0) text.append(" (#").append(std::to_string(site.index)).append(")");
    }
    text.append(": ");
  }
  return text.append(printable(what));
}

}  // namespace tritonrt::detail

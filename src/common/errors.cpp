#include "common/errors.h"

#include <cstdio>

namespace tritonrt::detail {
namespace {

// Length of the well-formed UTF-8 sequence at the start of `s` (1 to 4), or 0 when it is not
// one (a stray continuation byte, a cut or overlong sequence, a surrogate, beyond U+10FFFF).
std::size_t utf8_sequence(std::string_view s) {
  const auto at = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = at(0);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xbf;  // the range of the byte after the lead
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;   // overlong
    if (lead == 0xed) high = 0x9f;  // surrogates
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;   // overlong
    if (lead == 0xf4) high = 0x8f;  // beyond U+10FFFF
  } else {
    return 0;
  }
  if (s.size() < length || at(1) < low || at(1) > high) return 0;
  for (std::size_t i = 2; i < length; ++i) {
    if (at(i) < 0x80 || at(i) > 0xbf) return 0;
  }
  return length;
}

}  // namespace

// Control bytes (a NUL would end the message) and bytes that are not UTF-8 are escaped, so
// that a message is readable text whatever a name or file held.
std::string printable(std::string_view text) {
  std::string out;
  while (!text.empty()) {
    const auto byte = static_cast<unsigned char>(text[0]);
    const std::size_t length = utf8_sequence(text);
    if (length == 0 || (byte < 0x20 && byte != '\n' && byte != '\t') || byte == 0x7f) {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
      text.remove_prefix(1);
    } else {
      out.append(text.substr(0, length));
      text.remove_prefix(length);
    }
  }
  return out;
}

std::string message_about(const ErrorSite& site, std::string_view what) {
  std::string text;
  if (site.op) {
    return text.append(printable(site.kernel))
        .append(": argument '")
        .append(printable(site.param))
        .append("' ")
        .append(printable(what));
  }
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

std::string error_message(const ErrorSite& site, std::string_view what) {
  return site.op ? message_about(site, what) : "tritonrt: " + message_about(site, what);
}

std::string without_prefix(std::string text) {
  constexpr std::string_view kPrefix = "tritonrt: ";
  if (text.starts_with(kPrefix)) text.erase(0, kPrefix.size());
  return text;
}

}  // namespace tritonrt::detail

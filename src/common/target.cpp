#include <cctype>

#include "common/errors.h"
#include "tritonrt/options.h"

namespace tritonrt {

Target Target::parse(std::string_view text) {
  const auto colon = text.find(':');
  auto fail = [&](const std::string& why) {
    detail::raise<TargetError>({}, "invalid target '{}': {} (expected e.g. cuda:90, cuda:80 or hip:gfx942)", text, why);
  };
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) fail("expected BACKEND:ARCH");
  Target t;
  t.backend = std::string(text.substr(0, colon));
  t.arch = std::string(text.substr(colon + 1));
  if (t.backend == "cuda") {
    for (char c : t.arch) {
      if (!std::isdigit(static_cast<unsigned char>(c))) fail("a cuda architecture is a compute capability such as 90");
    }
    t.warp_size = 32;
  } else if (t.backend == "hip") {
    // gfx<major><minor><stepping>: a decimal major, then two hex digits (gfx90a, gfx942, gfx1100).
    const std::string_view version = std::string_view(t.arch).substr(t.arch.starts_with("gfx") ? 3 : 0);
    auto is_hex = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f'); };
    bool valid = t.arch.starts_with("gfx") && version.size() >= 3 && version.size() <= 4;
    for (std::size_t i = 0; valid && i < version.size(); ++i) {
      valid = i + 2 < version.size() ? std::isdigit(static_cast<unsigned char>(version[i])) != 0 : is_hex(version[i]);
    }
    if (!valid) fail("a hip architecture is gfx and a version such as 942, 90a or 1100");
    // CDNA parts (gfx9xx) run 64-wide wavefronts; RDNA parts (gfx10+) run 32-wide.
    t.warp_size = t.arch.size() == 6 && t.arch[3] == '9' ? 64 : 32;
  } else {
    fail("unknown backend '" + t.backend + "'");
  }
  return t;
}

Target Target::cuda(int major, int minor) { return Target{"cuda", std::to_string(major * 10 + minor), 32}; }

std::string Target::str() const { return backend + ":" + arch; }

}  // namespace tritonrt

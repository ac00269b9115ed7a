#include <cctype>

#include "driver/driver.h"
#include "tritonrt/error.h"
#include "tritonrt/options.h"

namespace tritonrt {

Target Target::parse(std::string_view text) {
  const auto colon = text.find(':');
  auto bad = [&](const std::string& why) {
    return TargetError("tritonrt: invalid target '" + std::string(text) + "': " + why +
                       " (expected e.g. cuda:90, cuda:80 or hip:gfx942)");
  };
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
    throw bad("expected BACKEND:ARCH");
  }
  Target t;
  t.backend = std::string(text.substr(0, colon));
  t.arch = std::string(text.substr(colon + 1));
  if (t.backend == "cuda") {
    for (char c : t.arch) {
      if (!std::isdigit(static_cast<unsigned char>(c))) throw bad("a cuda architecture is a compute capability such as 90");
    }
    t.warp_size = 32;
  } else if (t.backend == "hip") {
    if (!t.arch.starts_with("gfx") || t.arch.size() < 4) throw bad("a hip architecture looks like gfx942");
    // CDNA parts (gfx9xx) run 64-wide wavefronts; RDNA parts (gfx10+) run 32-wide.
    t.warp_size = t.arch.size() == 6 && t.arch[3] == '9' ? 64 : 32;
  } else {
    throw bad("unknown backend '" + t.backend + "'");
  }
  return t;
}

Target Target::current() {
  const auto device = detail::Driver::get().current_device();
  const auto [major, minor] = detail::Driver::get().compute_capability(device);
  return Target{"cuda", std::to_string(major * 10 + minor), 32};
}

std::string Target::str() const { return backend + ":" + arch; }

}  // namespace tritonrt

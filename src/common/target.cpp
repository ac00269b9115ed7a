#include <cctype>
#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

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
  // Triton's AOT compiler writes BACKEND:ARCH:WARP_SIZE: the third part is taken when it is
  // the warp size the architecture runs.
  std::string_view arch = text.substr(colon + 1);
  std::optional<std::string_view> warp_text;
  if (const auto second = arch.find(':'); second != std::string_view::npos) {
    warp_text = arch.substr(second + 1);
    arch = arch.substr(0, second);
  }
  t.arch = std::string(arch);
  if (t.arch.empty()) fail("expected BACKEND:ARCH");
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
  if (warp_text) {
    int warp = 0;
    const auto [end, error] = std::from_chars(warp_text->data(), warp_text->data() + warp_text->size(), warp);
    if (warp_text->empty() || error != std::errc() || end != warp_text->data() + warp_text->size()) {
      fail("the part after BACKEND:ARCH is the warp size, a number such as 32");
    }
    // Written as Triton writes it (32, not 032 or +32), so the text is the target's own.
    if (warp != t.warp_size || *warp_text != std::to_string(t.warp_size)) {
      fail(fmt::format("{} runs {}-wide warps, not {}", t.str(), t.warp_size, *warp_text));
    }
  }
  return t;
}

Target Target::cuda(int major, int minor) { return Target{"cuda", std::to_string(major * 10 + minor), 32}; }

std::string Target::str() const { return backend + ":" + arch; }

}  // namespace tritonrt

// Target::parse reads user-given target strings (--target, Target::parse): it must return a
// cuda or hip target that prints back as the same text (less Triton's :WARP_SIZE suffix, which
// must be its warp size), or throw TargetError.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "tritonrt/error.h"
#include "tritonrt/options.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  tritonrt::Target t;
  try {
    t = tritonrt::Target::parse(text);
  } catch (const tritonrt::TargetError& e) {
    check_error_format(e);
    return 0;
  }
  // A parsed target is the text it came from, and parses again to itself.
  FUZZ_CHECK(t.str() == text || t.str() + ":" + std::to_string(t.warp_size) == text);
  FUZZ_CHECK(tritonrt::Target::parse(t.str()) == t);
  FUZZ_CHECK((t.backend == "cuda" && t.warp_size == 32) ||
             (t.backend == "hip" && (t.warp_size == 32 || t.warp_size == 64)));
  return 0;
}

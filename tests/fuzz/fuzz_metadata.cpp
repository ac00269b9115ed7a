// KernelMetadata::parse reads Triton's metadata from a cache that may be damaged or edited by
// hand: it must return fields within their ranges or throw ArtifactError. Any other exception
// escapes this function, terminates the process, and libFuzzer reports the input.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"
#include "tritonrt/artifact.h"
#include "tritonrt/error.h"

namespace {

bool power_of_two_in(std::int64_t value, std::int64_t low, std::int64_t high) {
  return value >= low && value <= high && std::has_single_bit(static_cast<std::uint64_t>(value));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  tritonrt::KernelMetadata m;
  try {
    m = tritonrt::KernelMetadata::parse(text);
  } catch (const tritonrt::ArtifactError& e) {
    check_error_format(e);
    return 0;
  }
  // The ranges metadata.cpp promises: a launch may use these fields without checking again.
  FUZZ_CHECK(power_of_two_in(m.num_warps, 1, 1024));
  FUZZ_CHECK(power_of_two_in(m.num_ctas, 1, 16));
  FUZZ_CHECK(power_of_two_in(m.target.warp_size, 32, 64));
  FUZZ_CHECK(m.num_stages >= 0 && m.num_stages <= (1 << 16));
  FUZZ_CHECK(m.shared >= 0 && m.shared <= 262144);
  FUZZ_CHECK(m.tmem_size >= 0 && m.tmem_size <= (1 << 20));
  FUZZ_CHECK(m.global_scratch_size >= 0 && m.profile_scratch_size >= 0);
  FUZZ_CHECK(power_of_two_in(m.global_scratch_align, 1, 1 << 20));
  FUZZ_CHECK(power_of_two_in(m.profile_scratch_align, 1, 1 << 20));
  FUZZ_CHECK(!m.name.empty() && m.name.find('\0') == std::string_view::npos);
  FUZZ_CHECK(m.json == text);
  return 0;
}

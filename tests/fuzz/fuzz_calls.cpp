// The calls file of `tritonrt bundle create --calls` (tools/calls.h) is written by hand:
// parse_calls must return the calls or throw CallsError naming the file.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "calls.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    for (const auto& call : tritonrt::cli::parse_calls(text, "/fuzz/calls.json")) {
      FUZZ_CHECK(!call.source.empty() && !call.name.empty());
      FUZZ_CHECK(call.options.num_warps.value_or(0) >= 0);
    }
  } catch (const tritonrt::cli::CallsError& e) {
    check_error_format(e);
    FUZZ_CHECK(std::string_view(e.what()).find("/fuzz/calls.json") != std::string_view::npos);
  }
  return 0;
}

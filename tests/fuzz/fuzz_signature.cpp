// cli::parse_signature reads the command line's --signature: it must return arguments (strings
// pointing into the given storage, pointers at the two stand-in addresses) or throw
// SignatureError, which the CLI turns into a usage error; any other exception would escape it.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "signature.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::deque<std::string> strings;
  std::vector<tritonrt::Arg> args;
  try {
    args = tritonrt::cli::parse_signature(text, strings);
  } catch (const tritonrt::cli::SignatureError&) {
    return 0;
  }
  using tritonrt::ArgKind;
  FUZZ_CHECK(args.size() <= size / 2 + 1);  // one argument per comma-separated token
  std::size_t string_args = 0;
  for (const tritonrt::Arg& a : args) {
    FUZZ_CHECK(static_cast<int>(a.dtype) < tritonrt::kDTypeCount);
    switch (a.kind) {
      case ArgKind::string: {
        // Points at the whole of the next stored string, never into freed or foreign memory.
        FUZZ_CHECK(string_args < strings.size());
        const std::string& s = strings[string_args++];
        FUZZ_CHECK(a.value.s == s.data() && a.size == s.size());
        break;
      }
      case ArgKind::pointer:
        FUZZ_CHECK(a.value.u == tritonrt::cli::kAlignedAddress || a.value.u == tritonrt::cli::kUnalignedAddress);
        break;
      case ArgKind::typed:
        FUZZ_CHECK(a.stored == ArgKind::sint || a.stored == ArgKind::uint || a.stored == ArgKind::real);
        break;
      case ArgKind::python_default:
        FUZZ_CHECK(!"a command line cannot ask for a Python default");
        break;
      default:
        break;
    }
  }
  FUZZ_CHECK(string_args == strings.size());
  return 0;
}

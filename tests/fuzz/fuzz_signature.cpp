// cli::parse_signature reads the command line's --signature: it must return arguments (strings
// and tuples' elements pointing into the given storage, pointers at the two stand-in addresses) or throw
// SignatureError, which the CLI turns into a usage error; any other exception would escape it.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "signature.h"

namespace {

// One argument, a tuple's elements in turn (depth first, the order they were parsed in).
void check(const tritonrt::Arg& a, const tritonrt::cli::SignatureStorage& storage, std::size_t& string_args,
           std::size_t& tuples, int depth) {
  using tritonrt::ArgKind;
  FUZZ_CHECK(static_cast<int>(a.dtype) < tritonrt::kDTypeCount);
  switch (a.kind) {
    case ArgKind::string: {
      // Points at the whole of the next stored string, never into freed or foreign memory.
      FUZZ_CHECK(string_args < storage.strings.size());
      const std::string& s = storage.strings[string_args++];
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
    case ArgKind::tuple: {
      // Its elements lie in one of the storage's tuples, whole.
      FUZZ_CHECK(depth < 1000);
      bool stored = false;
      for (const auto& t : storage.tuples) stored |= t.data() == a.object && t.size() == a.value.u;
      FUZZ_CHECK(stored || a.value.u == 0);
      ++tuples;
      for (const tritonrt::Arg& e : a.elements()) check(e, storage, string_args, tuples, depth + 1);
      break;
    }
    default:
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  tritonrt::cli::SignatureStorage storage;
  std::vector<tritonrt::Arg> args;
  try {
    args = tritonrt::cli::parse_signature(text, storage);
  } catch (const tritonrt::cli::SignatureError&) {
    return 0;
  }
  FUZZ_CHECK(args.size() <= size / 2 + 1);  // one argument per comma-separated token
  std::size_t string_args = 0, tuples = 0;
  for (const tritonrt::Arg& a : args) check(a, storage, string_args, tuples, 0);
  FUZZ_CHECK(string_args == storage.strings.size());
  FUZZ_CHECK(tuples == storage.tuples.size());
  return 0;
}

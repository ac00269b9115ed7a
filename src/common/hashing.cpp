#include "common/hashing.h"

#include <cstring>

namespace tritonrt::detail {

bool same_constexpr(const Arg& a, const Arg& b) noexcept {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case ArgKind::none:
    case ArgKind::python_default:
      return true;
    case ArgKind::string:
      return a.size == b.size && std::memcmp(a.value.s, b.value.s, a.size) == 0;
    case ArgKind::dtype:
      return a.dtype == b.dtype;
    default:
      return a.value.u == b.value.u;
  }
}

std::uint64_t constexpr_bits(const Arg& a) noexcept {
  if (a.kind == ArgKind::string) {
    std::uint64_t h = kHashSeed;
    for (std::size_t i = 0; i < a.size; ++i) h = hash_mix(h, static_cast<unsigned char>(a.value.s[i]));
    return h;
  }
  if (a.kind == ArgKind::dtype) return static_cast<std::uint64_t>(a.dtype);
  if (a.kind == ArgKind::none || a.kind == ArgKind::python_default) return 0;
  return a.value.u;
}

}  // namespace tritonrt::detail

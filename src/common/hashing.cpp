#include "common/hashing.h"

#include <algorithm>
#include <cstring>

#include "tritonrt/tensor_descriptor.h"

namespace tritonrt::detail {

bool same_other_constexpr(const Arg& a, const Arg& b) noexcept {
  switch (a.kind) {
    case ArgKind::none:
    case ArgKind::python_default:
      return true;
    case ArgKind::string:
      return a.size == b.size && std::memcmp(a.value.s, b.value.s, a.size) == 0;
    case ArgKind::dtype:
      return a.dtype == b.dtype;
    case ArgKind::descriptor:
      return same_descriptor_key(a, b);
    case ArgKind::tuple:
      return std::ranges::equal(a.elements(), b.elements(),
                                [](const Arg& x, const Arg& y) { return same_constexpr(x, y); });
    default:
      return a.value.u == b.value.u;
  }
}

bool same_descriptor_key(const Arg& a, const Arg& b) noexcept {
  const auto& x = *static_cast<const TensorDescriptor*>(a.object);
  const auto& y = *static_cast<const TensorDescriptor*>(b.object);
  const NvmmaSharedLayout *lx = x.layout(), *ly = y.layout();
  if (x.dtype() != y.dtype() || x.rank() != y.rank()) return false;
  const auto bx = x.block_shape(), by = y.block_shape();
  for (std::size_t i = 0; i < bx.size(); ++i) {  // inline: cheaper than memcmp at ranks 1-5
    if (bx[i] != by[i]) return false;
  }
  return lx == nullptr ? ly == nullptr : ly != nullptr && *lx == *ly;
}

bool holds_descriptor(const Arg& tuple) noexcept {
  return std::ranges::any_of(tuple.elements(), [](const Arg& e) {
    return e.kind == ArgKind::descriptor || (e.kind == ArgKind::tuple && holds_descriptor(e));
  });
}

bool same_tuple_descriptors(const Arg& a, const Arg& b) noexcept {
  // Only descriptors and tuples compared: other elements of one code may differ in kind (an
  // integer passed signed or unsigned) and are keyed by their codes.
  return std::ranges::equal(a.elements(), b.elements(), [](const Arg& x, const Arg& y) {
    if (x.kind == ArgKind::descriptor) return y.kind == ArgKind::descriptor && same_descriptor_key(x, y);
    return x.kind != ArgKind::tuple || (y.kind == ArgKind::tuple && same_tuple_descriptors(x, y));
  });
}

std::uint64_t hash_tuple_descriptors(std::uint64_t h, const Arg& tuple) noexcept {
  for (const Arg& e : tuple.elements()) {
    if (e.kind == ArgKind::descriptor) h = hash_constexpr(h, e);
    if (e.kind == ArgKind::tuple) h = hash_tuple_descriptors(h, e);
  }
  return h;
}

std::uint64_t constexpr_bits(const Arg& a) noexcept {
  if (a.kind == ArgKind::descriptor) {
    std::uint64_t h = hash_mix(kHashSeed, static_cast<std::uint64_t>(a.dtype));
    const auto& d = *static_cast<const TensorDescriptor*>(a.object);
    for (const std::int64_t b : d.block_shape()) h = hash_mix(h, static_cast<std::uint64_t>(b));
    if (const NvmmaSharedLayout* l = d.layout()) {
      h = hash_mix(h, (static_cast<std::uint64_t>(l->swizzle_byte_width) << 16) ^
                          (static_cast<std::uint64_t>(l->element_bitwidth) << 8) ^ (l->transposed ? 2u : 0u) ^
                          (l->fp4_padded ? 1u : 0u) ^ (1u << 30));
    }
    return h;
  }
  if (a.kind == ArgKind::string) {
    std::uint64_t h = kHashSeed;
    for (std::size_t i = 0; i < a.size; ++i) h = hash_mix(h, static_cast<unsigned char>(a.value.s[i]));
    return h;
  }
  if (a.kind == ArgKind::tuple) {
    std::uint64_t h = hash_mix(kHashSeed, a.value.u);
    for (const Arg& e : a.elements()) h = hash_constexpr(h, e);
    return h;
  }
  if (a.kind == ArgKind::dtype) return static_cast<std::uint64_t>(a.dtype);
  if (a.kind == ArgKind::none || a.kind == ArgKind::python_default) return 0;
  return a.value.u;
}

}  // namespace tritonrt::detail

// Kernel parameters as Triton's launcher passes them: each runtime argument's bytes, typed
// as the specialization typed it.
#pragma once

#include <cstdint>
#include <cstring>

#include "common/specialization.h"
#include "tritonrt/arg.h"

namespace tritonrt::detail {

/// Floating-point arguments other than a plain float: converted to the kernel's type.
void write_converted_param(std::uint64_t& slot, std::uint8_t code, const Arg& a);

/// Where the driver reads one runtime argument's bytes. Addresses and integers (range-
/// checked by the specializer) are read in place, from the argument's own 8 bytes
/// (little-endian: the low bytes are the value of any width); floating-point types are
/// converted into `slot`.
[[gnu::always_inline]] inline void* param_bytes(std::uint64_t& slot, std::uint8_t code, const Arg& a) {
  if (TypeCode::is_pointer(code) || !is_floating(TypeCode::dtype(code))) [[likely]] {
    return const_cast<void*>(static_cast<const void*>(&a.value));
  }
  if (code == TypeCode::scalar(DType::fp32) && a.kind == ArgKind::real) [[likely]] {
    // A plain float argument, the common case, converted here rather than in a call.
    const float f = static_cast<float>(a.value.f);
    std::uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    slot = bits;
    return &slot;
  }
  write_converted_param(slot, code, a);
  return &slot;
}

}  // namespace tritonrt::detail

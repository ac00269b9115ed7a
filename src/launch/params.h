// Kernel parameters as Triton's launcher passes them: each runtime argument's bytes in an
// 8-byte slot, typed as the specialization typed it.
#pragma once

#include <cstdint>
#include <cstring>

#include "common/specialization.h"
#include "tritonrt/arg.h"

namespace tritonrt::detail {

/// Floating-point and fixed-type arguments: converted to the kernel's type (out of line).
void write_converted_param(std::uint64_t& slot, std::uint8_t code, const Arg& a);

/// Writes one runtime argument into its slot. Addresses and integers (range-checked by the
/// specializer) pass their low bytes as they are (little-endian); only floating-point types
/// and fixed-type scalars need converting.
[[gnu::always_inline]] inline void write_param(std::uint64_t& slot, std::uint8_t code, const Arg& a) {
  if (TypeCode::is_pointer(code) || (!is_floating(TypeCode::dtype(code)) && a.kind != ArgKind::typed)) [[likely]] {
    slot = a.value.u;
    return;
  }
  if (code == TypeCode::scalar(DType::fp32) && a.kind == ArgKind::real) [[likely]] {
    // A plain float argument, the common case, converted here rather than in a call.
    const float f = static_cast<float>(a.value.f);
    std::uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    slot = bits;
    return;
  }
  write_converted_param(slot, code, a);
}

}  // namespace tritonrt::detail

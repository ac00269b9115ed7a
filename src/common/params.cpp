// Kernel parameters as Triton's launcher packs them, for the kinds the specializer's inline
// path leaves out: half-precision and fixed-type floats, fixed-type integers.
#include "common/specialization.h"

#include <cstring>

namespace tritonrt::detail {
namespace {

// Triton's float packing: fp16/bf16 by round-to-nearest-even from the value as float.
std::uint16_t to_fp16_bits(double value) {
  const float f = static_cast<float>(value);
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t exp = (x >> 23) & 0xffu;
  std::uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<std::uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 0x1f) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<std::uint16_t>(sign);
    mant |= 0x800000u;
    const int shift = 14 - e;
    std::uint32_t half = mant >> shift;
    const std::uint32_t rest = mant & ((1u << shift) - 1);
    const std::uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
  const std::uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent: correct
  return static_cast<std::uint16_t>(sign | half);
}

std::uint16_t to_bf16_bits(double value) {
  const float f = static_cast<float>(value);
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

double number_as_double(const Arg& a) {
  switch (a.value_kind()) {
    case ArgKind::real:
      return a.value.f;
    case ArgKind::sint:
      return static_cast<double>(a.value.i);
    default:
      return static_cast<double>(a.value.u);
  }
}

}  // namespace

void* rare_param_bytes(std::uint64_t& slot, std::uint8_t code, const Arg& a) {
  // A descriptor stands for several kernel parameters, which depend on how the kernel was
  // compiled: the launch expands it (launch/launcher.cpp), reading the descriptor from here.
  if (TypeCode::is_descriptor(code)) return const_cast<void*>(a.object);
  if (code == TypeCode::kTuple) return nullptr;  // its elements are packed one by one (specialize_tuple)
  // Addresses and integers (range-checked by the specializer) are read in place: the low
  // bytes of the argument's 8 (little-endian) are the value at any width.
  if (TypeCode::is_pointer(code) || !is_floating(TypeCode::dtype(code))) {
    return const_cast<void*>(static_cast<const void*>(&a.value));
  }
  slot = 0;
  switch (TypeCode::dtype(code)) {
    case DType::fp32: {
      const float f = static_cast<float>(number_as_double(a));
      std::memcpy(&slot, &f, sizeof f);
      break;
    }
    case DType::fp64: {
      const double f = number_as_double(a);
      std::memcpy(&slot, &f, sizeof f);
      break;
    }
    case DType::fp16:
      slot = to_fp16_bits(number_as_double(a));
      break;
    default:
      slot = to_bf16_bits(number_as_double(a));
      break;
  }
  return &slot;
}

}  // namespace tritonrt::detail

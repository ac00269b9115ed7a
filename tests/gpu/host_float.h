// Host-side fp16 / bf16 / fp8e4nv conversions for the GPU tests' inputs and references:
// exact decoding, and encoding with one round-to-nearest-even from a double.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace tritonrt::test {

struct MiniFloat {
  int exp_bits;
  int man_bits;
  int bias;
  bool has_inf;  ///< IEEE style (all-ones exponent is inf/NaN); false: e4m3fn (only S.1111.111 is NaN)
};

inline constexpr MiniFloat kFp16{5, 10, 15, true};
inline constexpr MiniFloat kBf16{8, 7, 127, true};
inline constexpr MiniFloat kFp8e4nv{4, 3, 7, false};  // float8_e4m3fn, Triton's fp8e4nv

inline double minifloat_max(MiniFloat f) {
  const int top_exp = (1 << f.exp_bits) - (f.has_inf ? 2 : 1);
  // e4m3fn: the all-ones exponent holds normal numbers except mantissa all ones (NaN).
  const double top_man = f.has_inf ? 2.0 - std::ldexp(1.0, -f.man_bits) : 2.0 - std::ldexp(2.0, -f.man_bits);
  return std::ldexp(top_man, top_exp - f.bias);
}

inline double decode(std::uint32_t bits, MiniFloat f) {
  const std::uint32_t man_mask = (1u << f.man_bits) - 1;
  const std::uint32_t exp_mask = (1u << f.exp_bits) - 1;
  const bool negative = (bits >> (f.exp_bits + f.man_bits)) & 1u;
  const std::uint32_t e = (bits >> f.man_bits) & exp_mask;
  const std::uint32_t m = bits & man_mask;
  double v;
  if (f.has_inf && e == exp_mask) {
    v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (!f.has_inf && e == exp_mask && m == man_mask) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), 1 - f.bias - f.man_bits);
  } else {
    v = std::ldexp(static_cast<double>(m | (1u << f.man_bits)), static_cast<int>(e) - f.bias - f.man_bits);
  }
  return negative ? -v : v;
}

/// Rounds `v` to the format, nearest-even, once. Overflow gives inf (IEEE formats) or
/// saturates to the largest finite value (fp8e4nv, as Triton's satfinite conversion does).
inline std::uint32_t encode(double v, MiniFloat f) {
  const std::uint32_t sign = std::signbit(v) ? 1u << (f.exp_bits + f.man_bits) : 0u;
  const std::uint32_t exp_mask = (1u << f.exp_bits) - 1;
  const std::uint32_t man_mask = (1u << f.man_bits) - 1;
  if (std::isnan(v)) return sign | (exp_mask << f.man_bits) | man_mask;
  double a = std::fabs(v);
  const int min_exp = 1 - f.bias;  // exponent of the smallest normal number
  if (a != 0 && !std::isinf(a)) {
    int e = 0;
    std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
    const int quantum = std::max(e - 1, min_exp) - f.man_bits;
    a = std::ldexp(std::nearbyint(std::ldexp(a, -quantum)), quantum);  // ties to even (default mode)
  }
  if (a > minifloat_max(f)) {
    if (!f.has_inf)
      a = minifloat_max(f);
    else
      return sign | (exp_mask << f.man_bits);
  }
  if (a == 0) return sign;
  int e = 0;
  std::frexp(a, &e);
  if (e - 1 < min_exp) {
    return sign | static_cast<std::uint32_t>(std::ldexp(a, f.bias - 1 + f.man_bits));  // subnormal
  }
  const auto man = static_cast<std::uint32_t>(std::ldexp(a, f.man_bits - (e - 1))) & man_mask;
  return sign | (static_cast<std::uint32_t>(e - 1 + f.bias) << f.man_bits) | man;
}

inline std::uint16_t to_fp16(double v) { return static_cast<std::uint16_t>(encode(v, kFp16)); }
inline std::uint16_t to_bf16(double v) { return static_cast<std::uint16_t>(encode(v, kBf16)); }
inline std::uint8_t to_fp8e4nv(double v) { return static_cast<std::uint8_t>(encode(v, kFp8e4nv)); }
inline double from_fp16(std::uint16_t b) { return decode(b, kFp16); }
inline double from_bf16(std::uint16_t b) { return decode(b, kBf16); }
inline double from_fp8e4nv(std::uint8_t b) { return decode(b, kFp8e4nv); }

}  // namespace tritonrt::test

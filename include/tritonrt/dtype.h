// Element and scalar types, spelled as Triton spells them ("fp32", "bf16", "fp8e4nv", ...).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

namespace tritonrt {

enum class DType : std::uint8_t {
  u1,
  i8,
  i16,
  i32,
  i64,
  u8,
  u16,
  u32,
  u64,
  fp16,
  bf16,
  fp32,
  fp64,
  fp8e4nv,
  fp8e5,
  fp8e4b15,
  fp8e4b8,
  fp8e5b16,
};
inline constexpr int kDTypeCount = 18;

/// Triton's name of a type, e.g. `to_string(DType::fp8e4nv) == "fp8e4nv"`.
std::string_view to_string(DType type) noexcept;
/// The `triton.language` attribute naming the type, e.g. "float8e4nv" (for constexpr dtypes).
std::string_view language_name(DType type) noexcept;
/// The `torch` attribute naming the type, e.g. "float8_e4m3fn"; "" where torch has none (fp8e4b15).
std::string_view torch_name(DType type) noexcept;
/// Parses Triton's spelling; std::nullopt when unknown.
std::optional<DType> parse_dtype(std::string_view name) noexcept;
/// True for the floating-point types with arithmetic (fp16, bf16, fp32, fp64); not fp8.
constexpr bool is_floating(DType type) noexcept {
  return type == DType::fp16 || type == DType::bf16 || type == DType::fp32 || type == DType::fp64;
}
/// Size in bytes of one scalar of this type as a kernel parameter (u1 is one byte).
int scalar_size(DType type) noexcept;

/// The DType of a C++ element type, for typed device pointers `T*`; nullopt when none fits.
template <class T>
constexpr std::optional<DType> dtype_of() noexcept {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, bool>) {
    return DType::u1;
  } else if constexpr (std::is_integral_v<U> && std::is_signed_v<U>) {
    constexpr DType by_size[] = {DType::i8, DType::i16, DType::i32, DType::i32, DType::i64};
    return sizeof(U) <= 8 ? std::optional<DType>(by_size[sizeof(U) / 2]) : std::nullopt;
  } else if constexpr (std::is_integral_v<U>) {
    constexpr DType by_size[] = {DType::u8, DType::u16, DType::u32, DType::u32, DType::u64};
    return sizeof(U) <= 8 ? std::optional<DType>(by_size[sizeof(U) / 2]) : std::nullopt;
  } else if constexpr (std::is_same_v<U, float>) {
    return DType::fp32;
  } else if constexpr (std::is_same_v<U, double>) {
    return DType::fp64;
  } else {
    return std::nullopt;
  }
}

}  // namespace tritonrt

#include "tritonrt/dtype.h"

#include <array>

namespace tritonrt {
namespace {

// tritonrt's one table of element types: the bridge gets it from here (python_compiler.cpp).
struct DTypeInfo {
  std::string_view name;      // Triton's type string
  std::string_view language;  // triton.language attribute
  std::string_view torch;     // torch attribute, "" where torch has none
  int size;
};

constexpr std::array<DTypeInfo, kDTypeCount> kInfo = {{
    {"u1", "int1", "bool", 1},
    {"i8", "int8", "int8", 1},
    {"i16", "int16", "int16", 2},
    {"i32", "int32", "int32", 4},
    {"i64", "int64", "int64", 8},
    {"u8", "uint8", "uint8", 1},
    {"u16", "uint16", "uint16", 2},
    {"u32", "uint32", "uint32", 4},
    {"u64", "uint64", "uint64", 8},
    {"fp16", "float16", "float16", 2},
    {"bf16", "bfloat16", "bfloat16", 2},
    {"fp32", "float32", "float32", 4},
    {"fp64", "float64", "float64", 8},
    // Triton's own names for torch's fp8 types (triton._utils.type_canonicalisation_dict).
    {"fp8e4nv", "float8e4nv", "float8_e4m3fn", 1},
    {"fp8e5", "float8e5", "float8_e5m2", 1},
    {"fp8e4b15", "float8e4b15", "", 1},
    {"fp8e4b8", "float8e4b8", "float8_e4m3fnuz", 1},
    {"fp8e5b16", "float8e5b16", "float8_e5m2fnuz", 1},
}};

}  // namespace

std::string_view to_string(DType type) noexcept { return kInfo[static_cast<int>(type)].name; }

std::string_view language_name(DType type) noexcept { return kInfo[static_cast<int>(type)].language; }

std::string_view torch_name(DType type) noexcept { return kInfo[static_cast<int>(type)].torch; }

int scalar_size(DType type) noexcept { return kInfo[static_cast<int>(type)].size; }

std::optional<DType> parse_dtype(std::string_view name) noexcept {
  for (int i = 0; i < kDTypeCount; ++i) {
    if (kInfo[i].name == name) return static_cast<DType>(i);
  }
  return std::nullopt;
}

}  // namespace tritonrt

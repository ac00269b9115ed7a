#include "tritonrt/dtype.h"

#include <array>

namespace tritonrt {
namespace {

struct DTypeInfo {
  std::string_view name;      // Triton's type string
  std::string_view language;  // triton.language attribute
  int size;
};

constexpr std::array<DTypeInfo, kDTypeCount> kInfo = {{
    {"u1", "int1", 1},
    {"i8", "int8", 1},
    {"i16", "int16", 2},
    {"i32", "int32", 4},
    {"i64", "int64", 8},
    {"u8", "uint8", 1},
    {"u16", "uint16", 2},
    {"u32", "uint32", 4},
    {"u64", "uint64", 8},
    {"fp16", "float16", 2},
    {"bf16", "bfloat16", 2},
    {"fp32", "float32", 4},
    {"fp64", "float64", 8},
    {"fp8e4nv", "float8e4nv", 1},
    {"fp8e5", "float8e5", 1},
    {"fp8e4b15", "float8e4b15", 1},
    {"fp8e4b8", "float8e4b8", 1},
    {"fp8e5b16", "float8e5b16", 1},
}};

}  // namespace

std::string_view to_string(DType type) noexcept { return kInfo[static_cast<int>(type)].name; }

std::string_view language_name(DType type) noexcept { return kInfo[static_cast<int>(type)].language; }

int scalar_size(DType type) noexcept { return kInfo[static_cast<int>(type)].size; }

std::optional<DType> parse_dtype(std::string_view name) noexcept {
  for (int i = 0; i < kDTypeCount; ++i) {
    if (kInfo[i].name == name) return static_cast<DType>(i);
  }
  return std::nullopt;
}

}  // namespace tritonrt

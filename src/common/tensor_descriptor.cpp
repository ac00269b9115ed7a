#include "tritonrt/tensor_descriptor.h"

#include <bit>
#include <cstdint>
#include <string_view>

#include "common/errors.h"

namespace tritonrt {
namespace {

// Triton's limit on a block's elements (TRITON_MAX_TENSOR_NUMEL, 1048576): 2 to this.
constexpr int kMaxBlockExponent = 20;

bool is_floating_point(DType t) noexcept {
  const std::string_view name = to_string(t);
  return name.starts_with("fp") || name == "bf16";
}

void check_block_shape(std::span<const std::int64_t> block) {
  // Each size a power of 2, so the block's elements are 2 to the sum of their exponents (no
  // multiplication that could overflow: a config hook's block shape is checked on every
  // launch that applies it).
  int exponents = 0;
  for (std::size_t i = 0; i < block.size(); ++i) {
    const std::int64_t b = block[i];
    if (b <= 0 || (b & (b - 1)) != 0) {
      detail::raise<ArgumentError>({}, "tensor descriptor: block shape element {} is {}, not a power of 2", i, b);
    }
    exponents += std::countr_zero(static_cast<std::uint64_t>(b));
  }
  if (exponents > kMaxBlockExponent) {
    detail::raise<ArgumentError>({}, "tensor descriptor: the block shape has more than {} elements (Triton's limit)",
                                 std::int64_t{1} << kMaxBlockExponent);
  }
}

// Gluon's rule (Triton 3.9 checks it): the innermost block dimension spans at least one
// swizzle width.
void check_swizzle_fits(const NvmmaSharedLayout& layout, std::span<const std::int64_t> block) {
  const std::int64_t least = layout.swizzle_byte_width / (layout.element_bitwidth / 8 * (layout.fp4_padded ? 2 : 1));
  if (block.empty() || block.back() < least) {
    detail::raise<ArgumentError>({},
                                 "tensor descriptor layout: a {}-byte swizzle needs the last block dimension to "
                                 "be at least {}, not {}",
                                 layout.swizzle_byte_width, least, block.empty() ? 0 : block.back());
  }
}

}  // namespace

NvmmaSharedLayout NvmmaSharedLayout::default_for(std::span<const std::int64_t> block_shape, DType dtype,
                                                 bool transposed, bool fp4_padded) {
  NvmmaSharedLayout layout;
  layout.element_bitwidth = scalar_size(dtype) * 8;
  layout.transposed = transposed;
  layout.fp4_padded = fp4_padded;
  if (block_shape.empty()) {
    layout.swizzle_byte_width = 0;
    return layout;
  }
  // Gluon's rule: the contiguous dimension (the first one when transposed) in bytes picks the
  // widest swizzle it is a multiple of; fewer than 8 rows outside it, or one dimension, none.
  const std::size_t rank = block_shape.size();
  const std::size_t contiguous = transposed ? 0 : rank - 1;
  std::int64_t bytes = 0;
  if (__builtin_mul_overflow(block_shape[contiguous], (fp4_padded ? 2 : 1) * layout.element_bitwidth / 8, &bytes)) {
    detail::raise<ArgumentError>({}, "tensor descriptor layout: block dimension {} ({}) is too large", contiguous,
                                 block_shape[contiguous]);
  }
  layout.swizzle_byte_width = 0;
  for (const int width : {128, 64, 32}) {
    if (bytes >= width && bytes % width == 0) {
      layout.swizzle_byte_width = width;
      break;
    }
  }
  std::int64_t outer = 1;
  for (std::size_t i = 0; i < rank; ++i) {
    if (i != contiguous && __builtin_mul_overflow(outer, block_shape[i], &outer)) {
      detail::raise<ArgumentError>({}, "tensor descriptor layout: the block shape's size overflows at dimension {}", i);
    }
  }
  if (rank < 2 || outer < 8) layout.swizzle_byte_width = 0;
  return layout;
}

TensorDescriptor TensorDescriptor::make(const void* base, DType dtype, std::span<const std::int64_t> shape,
                                        std::span<const std::int64_t> strides,
                                        std::span<const std::int64_t> block_shape, Padding padding) {
  const std::size_t rank = shape.size();
  if (rank == 0 || rank > kMaxRank) {
    detail::raise<ArgumentError>({}, "tensor descriptor: rank {} is outside 1 to {}", rank, kMaxRank);
  }
  if (strides.size() != rank || block_shape.size() != rank) {
    detail::raise<ArgumentError>({}, "tensor descriptor: {} sizes, {} strides and {} block sizes (rank mismatch)", rank,
                                 strides.size(), block_shape.size());
  }
  if (reinterpret_cast<std::uintptr_t>(base) % 16 != 0) {
    detail::raise<ArgumentError>({}, "tensor descriptor: the base address {} is not 16-byte aligned", base);
  }
  const int element = scalar_size(dtype);
  for (std::size_t i = 0; i + 1 < rank; ++i) {
    std::int64_t bytes = 0;
    if (__builtin_mul_overflow(strides[i], element, &bytes)) {
      detail::raise<ArgumentError>({}, "tensor descriptor: stride {} ({} elements of {} bytes) is too large", i,
                                   strides[i], element);
    }
    if (bytes % 16 != 0) {
      detail::raise<ArgumentError>({},
                                   "tensor descriptor: stride {} ({} elements of {} bytes) is not a multiple of "
                                   "16 bytes",
                                   i, strides[i], element);
    }
  }
  if (strides[rank - 1] != 1) {
    detail::raise<ArgumentError>({}, "tensor descriptor: the last dimension must be contiguous (stride 1, not {})",
                                 strides[rank - 1]);
  }
  for (std::size_t i = 0; i < rank; ++i) {
    if (shape[i] <= 0) detail::raise<ArgumentError>({}, "tensor descriptor: size {} is {}, not positive", i, shape[i]);
  }
  if (padding == Padding::nan && !is_floating_point(dtype)) {
    detail::raise<ArgumentError>({}, "tensor descriptor: NaN padding needs a floating-point element type, not {}",
                                 to_string(dtype));
  }
  TensorDescriptor d;
  d.base_ = base;
  d.dtype_ = dtype;
  d.rank_ = static_cast<std::uint8_t>(rank);
  d.padding_ = padding;
  for (std::size_t i = 0; i < rank; ++i) {
    d.shape_[i] = shape[i];
    d.strides_[i] = strides[i];
  }
  d.set_block_shape(block_shape);
  return d;
}

void TensorDescriptor::set_block_shape(std::span<const std::int64_t> block_shape) {
  if (block_shape.size() != rank_) {
    detail::raise<ArgumentError>({}, "tensor descriptor: {} block sizes for rank {}", block_shape.size(), rank_);
  }
  check_block_shape(block_shape);
  if (has_layout_) check_swizzle_fits(layout_, block_shape);
  for (std::size_t i = 0; i < block_shape.size(); ++i) block_[i] = block_shape[i];
}

void TensorDescriptor::set_layout(const NvmmaSharedLayout& layout) {
  const int swizzle = layout.swizzle_byte_width, bits = layout.element_bitwidth;
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128) {
    detail::raise<ArgumentError>({}, "tensor descriptor layout: swizzle_byte_width {} is not 0, 32, 64 or 128",
                                 swizzle);
  }
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64) {
    detail::raise<ArgumentError>({}, "tensor descriptor layout: element_bitwidth {} is not 8, 16, 32 or 64", bits);
  }
  if (bits != scalar_size(dtype_) * 8) {
    detail::raise<ArgumentError>({}, "tensor descriptor layout: element_bitwidth {} for {} elements of {} bits", bits,
                                 to_string(dtype_), scalar_size(dtype_) * 8);
  }
  check_swizzle_fits(layout, block_shape());
  layout_ = layout;
  has_layout_ = true;
}

}  // namespace tritonrt

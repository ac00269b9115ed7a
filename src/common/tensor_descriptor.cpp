#include "tritonrt/tensor_descriptor.h"

#include <cstdint>
#include <string_view>

#include "common/errors.h"

namespace tritonrt {
namespace {

// Triton's limit on a block's elements (TRITON_MAX_TENSOR_NUMEL).
constexpr std::int64_t kMaxBlockElements = 1048576;

bool is_floating_point(DType t) noexcept {
  const std::string_view name = to_string(t);
  return name.starts_with("fp") || name == "bf16";
}

void check_block_shape(std::span<const std::int64_t> block) {
  std::int64_t elements = 1;
  for (std::size_t i = 0; i < block.size(); ++i) {
    const std::int64_t b = block[i];
    if (b <= 0 || (b & (b - 1)) != 0) {
      detail::raise<ArgumentError>({}, "tensor descriptor: block shape element {} is {}, not a power of 2", i, b);
    }
    if (b > kMaxBlockElements / elements) {  // elements * b > the limit, without overflow
      detail::raise<ArgumentError>({}, "tensor descriptor: the block shape has more than {} elements (Triton's limit)",
                                   kMaxBlockElements);
    }
    elements *= b;
  }
}

}  // namespace

TensorDescriptor TensorDescriptor::make(const void* base, DType dtype, std::span<const std::int64_t> shape,
                                        std::span<const std::int64_t> strides,
                                        std::span<const std::int64_t> block_shape, Padding padding) {
  const std::size_t rank = shape.size();
  if (rank == 0 || rank > kMaxRank) {
    detail::raise<ArgumentError>({}, "tensor descriptor: rank {} is outside 1 to {}", rank, kMaxRank);
  }
  if (strides.size() != rank || block_shape.size() != rank) {
    detail::raise<ArgumentError>({}, "tensor descriptor: {} sizes, {} strides and {} block sizes (rank mismatch)",
                                 rank, strides.size(), block_shape.size());
  }
  if (reinterpret_cast<std::uintptr_t>(base) % 16 != 0) {
    detail::raise<ArgumentError>({}, "tensor descriptor: the base address {} is not 16-byte aligned", base);
  }
  const int element = scalar_size(dtype);
  for (std::size_t i = 0; i + 1 < rank; ++i) {
    if ((strides[i] * element) % 16 != 0) {
      detail::raise<ArgumentError>({}, "tensor descriptor: stride {} ({} elements of {} bytes) is not a multiple of "
                                   "16 bytes", i, strides[i], element);
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
  for (std::size_t i = 0; i < block_shape.size(); ++i) block_[i] = block_shape[i];
}

}  // namespace tritonrt

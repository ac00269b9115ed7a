// A TMA tensor descriptor built on the host, the C++ counterpart of Triton's
// `triton.tools.tensor_descriptor.TensorDescriptor`: pass one where the kernel takes a
// descriptor (`desc.load([m, n])` in the kernel), and tritonrt specializes the call as Triton
// does (`tensordesc<fp16[64, 64]>`) and, at launch, encodes the CUtensorMap the compiled kernel
// asks for (or, for a kernel compiled without TMA, passes the base, shape and strides).
//
//     const std::int64_t shape[] = {m, k}, strides[] = {k, 1}, block[] = {128, 64};
//     auto a_desc = tritonrt::TensorDescriptor::make(a_ptr, tritonrt::DType::fp16, shape, strides, block);
//     matmul(config, a_desc, b_desc, c_desc, m, n, k);
//
// The descriptor holds the device address, not the memory: it must outlive the launches it
// is passed to (the launch reads it, it does not copy it). With torch, tritonrt::torch::
// descriptor(tensor, block) makes one from a tensor (tritonrt/torch.h).
#pragma once

#include <cstdint>
#include <span>

#include "tritonrt/arg.h"
#include "tritonrt/dtype.h"

namespace tritonrt {

/// The shared-memory layout a Gluon kernel's descriptor carries (the `layout` of
/// `gluon.nvidia.hopper.TensorDescriptor`, Gluon's `NVMMASharedLayout`): how the tiles the TMA
/// copies are swizzled in shared memory, which the kernel reads from its descriptor type.
struct NvmmaSharedLayout {
  int swizzle_byte_width = 128;  ///< 0, 32, 64 or 128
  int element_bitwidth = 16;     ///< 8, 16, 32 or 64
  bool transposed = false;
  bool fp4_padded = false;

  /// Gluon's `NVMMASharedLayout.get_default_for(block_shape, dtype, transposed, fp4_padded)`:
  /// the widest swizzle the block's contiguous bytes allow.
  static NvmmaSharedLayout default_for(std::span<const std::int64_t> block_shape, DType dtype, bool transposed = false,
                                       bool fp4_padded = false);
  bool operator==(const NvmmaSharedLayout&) const = default;
};

class TensorDescriptor {
 public:
  static constexpr int kMaxRank = 5;
  /// What loads read outside the tensor: zeros, or NaN (floating-point element types only).
  enum class Padding : std::uint8_t { zero, nan };

  /// A descriptor of the `shape` tensor at device address `base`, with `strides` in elements,
  /// loaded and stored `block_shape` at a time. Checked as Triton checks its descriptors (rank
  /// 1 to 5, the same rank everywhere, 16-byte-aligned base and strides, the last stride 1,
  /// positive sizes, block sizes powers of two, NaN padding for floating-point types only):
  /// a broken rule is an ArgumentError saying which.
  static TensorDescriptor make(const void* base, DType dtype, std::span<const std::int64_t> shape,
                               std::span<const std::int64_t> strides, std::span<const std::int64_t> block_shape,
                               Padding padding = Padding::zero);

  /// Changes the block shape (an autotuned kernel's configs each load their own blocks), with
  /// the same checks.
  void set_block_shape(std::span<const std::int64_t> block_shape);

  /// Gives the descriptor a Gluon shared-memory layout, as Gluon's host TensorDescriptor has
  /// (its rank is the descriptor's): a `@gluon.jit` kernel's descriptor parameters need one,
  /// a `@triton.jit` kernel's take none. Checked as Gluon checks it (ArgumentError).
  void set_layout(const NvmmaSharedLayout& layout);
  /// The Gluon layout, or nullptr when it has none.
  const NvmmaSharedLayout* layout() const noexcept { return has_layout_ ? &layout_ : nullptr; }

  const void* base() const noexcept { return base_; }
  DType dtype() const noexcept { return dtype_; }
  int rank() const noexcept { return rank_; }
  Padding padding() const noexcept { return padding_; }
  std::span<const std::int64_t> shape() const noexcept { return {shape_, static_cast<std::size_t>(rank_)}; }
  std::span<const std::int64_t> strides() const noexcept { return {strides_, static_cast<std::size_t>(rank_)}; }
  std::span<const std::int64_t> block_shape() const noexcept { return {block_, static_cast<std::size_t>(rank_)}; }

 private:
  TensorDescriptor() = default;

  const void* base_ = nullptr;
  DType dtype_ = DType::u8;
  std::uint8_t rank_ = 0;
  Padding padding_ = Padding::zero;
  std::int64_t shape_[kMaxRank] = {};
  std::int64_t strides_[kMaxRank] = {};
  std::int64_t block_[kMaxRank] = {};
  bool has_layout_ = false;
  NvmmaSharedLayout layout_{};
};

/// A descriptor is passed by reference: the launch reads it where the caller keeps it.
template <>
struct ArgTraits<TensorDescriptor> {
  static void pack(Arg& a, const TensorDescriptor& d) noexcept {
    a.kind = ArgKind::descriptor;
    a.value.u = reinterpret_cast<std::uintptr_t>(d.base());
    a.dtype = d.dtype();
    a.object = &d;
  }
};

}  // namespace tritonrt

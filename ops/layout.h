// How operands of any strides map onto the op kernels' index spaces: pure functions over
// sizes and strides (no torch), so that they are tested exhaustively without a GPU.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>

namespace tritonrt::ops {

using Dims = std::span<const std::int64_t>;

/// An operand of an elementwise op: its sizes and strides, aligned to the output's trailing dims.
struct Operand {
  Dims sizes;
  Dims strides;
};

inline constexpr int kMaxDims = 4;  ///< dims add_strided_kernel indexes

/// The output (contiguous, `shape`) seen as at most kMaxDims dims, with each operand's
/// strides along them (0 where it is broadcast). Outermost first; leading dims are padding
/// of size 1 and stride 0.
struct ElementwiseLayout {
  int ndim = 0;  ///< dims in use, at the back
  std::array<std::int64_t, kMaxDims> sizes{};
  std::array<std::array<std::int64_t, kMaxDims>, 2> strides{};
};

/// Merges dims where every operand is contiguous across them and drops size-1 dims; false
/// when more than kMaxDims dims remain. `a` may be absent (its strides stay 0).
inline bool collapse(Dims shape, const Operand* a, const Operand& b, ElementwiseLayout& layout) {
  const Operand* operands[2] = {a, &b};
  const auto nd = static_cast<std::int64_t>(shape.size());
  int n = 0;  // dims so far, filled from the back
  for (std::int64_t d = nd - 1; d >= 0; --d) {
    if (shape[d] == 1) continue;
    std::int64_t strides[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
      const Operand* t = operands[k];
      if (t == nullptr) continue;
      const std::int64_t td = d - (nd - static_cast<std::int64_t>(t->sizes.size()));
      if (td >= 0 && t->sizes[td] != 1) strides[k] = t->strides[td];
    }
    const int inner = kMaxDims - n;  // the last dim added
    if (n > 0 && strides[0] == layout.strides[0][inner] * layout.sizes[inner] &&
        strides[1] == layout.strides[1][inner] * layout.sizes[inner]) {
      layout.sizes[inner] *= shape[d];
      continue;
    }
    if (n == kMaxDims) return false;
    ++n;
    layout.sizes[kMaxDims - n] = shape[d];
    layout.strides[0][kMaxDims - n] = strides[0];
    layout.strides[1][kMaxDims - n] = strides[1];
  }
  for (int i = 0; i < kMaxDims - n; ++i) layout.sizes[i] = 1;
  layout.ndim = n;
  return true;
}

/// One dim standing for dims [begin, end): {size, stride} when they are evenly strided
/// (size-1 dims ignored), std::nullopt otherwise.
inline std::optional<std::array<std::int64_t, 2>> merge_dims(Dims sizes, Dims strides, std::int64_t begin,
                                                             std::int64_t end) {
  std::int64_t size = 1;
  std::int64_t stride = 0;
  for (std::int64_t d = end - 1; d >= begin; --d) {
    if (sizes[d] == 1) continue;
    if (size == 1) {
      stride = strides[d];
    } else if (strides[d] != stride * size) {
      return std::nullopt;
    }
    size *= sizes[d];
  }
  return std::array<std::int64_t, 2>{size, stride};
}

inline std::int64_t next_pow2(std::int64_t v) {
  std::int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

inline constexpr std::int64_t kReductionTile = 2048;  ///< elements one program holds per step

/// A tensor seen as (outer, R, inner) around the reduced dim, in the reduction kernels'
/// terms: output row j = outer_index * inner + inner_index, element r along R.
struct Reduction {
  std::int64_t rows = 0;    ///< outer * inner
  std::int64_t length = 1;  ///< R
  std::int64_t inner = 1;
  std::int64_t stride_outer = 0, stride_r = 0, stride_inner = 0;
  std::int64_t block_j = 1, block_r = 1;  ///< the kernels' BLOCK_J x BLOCK_R tile
};

/// Plans a reduction along `dim`; false when the dims before or after it cannot be read as
/// one evenly strided dim each (the caller then makes the tensor contiguous).
inline bool plan_reduction(Dims sizes, Dims strides, std::int64_t dim, Reduction& plan) {
  const auto nd = static_cast<std::int64_t>(sizes.size());
  plan = Reduction{};
  if (nd == 0) {
    plan.rows = 1;
    return true;
  }
  const auto outer = merge_dims(sizes, strides, 0, dim);
  const auto inner = merge_dims(sizes, strides, dim + 1, nd);
  if (!outer || !inner) return false;
  plan.length = sizes[dim];
  plan.stride_r = strides[dim];
  plan.inner = (*inner)[0];
  plan.stride_inner = (*inner)[1];
  plan.stride_outer = (*outer)[1];
  plan.rows = (*outer)[0] * plan.inner;
  // Along a contiguous reduced dim, wide chunks of few rows; otherwise the rows are the
  // contiguous direction, so many rows and short chunks.
  const std::int64_t length = next_pow2(std::max<std::int64_t>(plan.length, 1));
  if (plan.stride_r == 1 || plan.length == 1) {
    plan.block_r = std::min<std::int64_t>(length, 1024);
    plan.block_j = std::min(next_pow2(plan.rows), kReductionTile / plan.block_r);
  } else {
    plan.block_j = std::min<std::int64_t>(next_pow2(plan.rows), 64);
    plan.block_r = std::min(length, kReductionTile / plan.block_j);
  }
  return true;
}

}  // namespace tritonrt::ops

// The operators' index planning (ops/layout.h): every element addressed as the tensor
// addresses it, checked exhaustively without a GPU.

#include <vector>

#include "layout.h"
#include "torch_test.h"

namespace tritonrt::test {
namespace {

// --- the ops' index planning (ops/layout.h) -----------------------------------------------------

// A random strided view: `sizes`, laid out in a random dim order, every dim stepped by 1 or 2.
struct View {
  std::vector<int64_t> sizes, strides;
};

View random_view(std::mt19937_64& rng, std::vector<int64_t> sizes) {
  std::vector<std::size_t> order(sizes.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  View v{sizes, std::vector<int64_t>(sizes.size())};
  int64_t stride = 1 + static_cast<int64_t>(rng() % 2);
  for (const std::size_t d : order) {
    v.strides[d] = stride;
    stride *= std::max<int64_t>(sizes[d], 1) * (1 + static_cast<int64_t>(rng() % 2));
  }
  return v;
}

// The offset of element `index` (row-major over `shape`) in an operand broadcast to `shape`.
int64_t broadcast_offset(const std::vector<int64_t>& shape, const View& v, int64_t index) {
  int64_t offset = 0;
  const auto nd = static_cast<int64_t>(shape.size());
  for (int64_t d = nd - 1; d >= 0; --d) {
    const int64_t i = index % shape[d];
    index /= shape[d];
    const int64_t td = d - (nd - static_cast<int64_t>(v.sizes.size()));
    if (td >= 0 && v.sizes[td] != 1) offset += i * v.strides[td];
  }
  return offset;
}

TEST(OpsLayout, CollapsedLayoutAddressesEveryElementAsTheOperandsDo) {
  std::mt19937_64 rng(std::random_device{}());
  int collapsed = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const std::size_t nd = rng() % 6;
    std::vector<int64_t> shape(nd);
    for (auto& s : shape) s = 1 + static_cast<int64_t>(rng() % 4);
    // Each operand keeps a random suffix of the dims and broadcasts some of them (size 1).
    auto operand_sizes = [&] {
      std::vector<int64_t> sizes(shape.end() - static_cast<std::ptrdiff_t>(rng() % (nd + 1)), shape.end());
      for (auto& s : sizes) s = rng() % 3 == 0 ? 1 : s;
      return sizes;
    };
    const View a = random_view(rng, operand_sizes()), b = random_view(rng, operand_sizes());
    const bool with_a = rng() % 4 != 0;
    const ops::Operand oa{a.sizes, a.strides}, ob{b.sizes, b.strides};
    ops::ElementwiseLayout layout;
    if (!ops::collapse(shape, with_a ? &oa : nullptr, ob, layout)) {
      EXPECT_GT(nd, static_cast<std::size_t>(ops::kMaxDims));
      continue;
    }
    ++collapsed;
    int64_t n = 1;
    for (const int64_t s : shape) n *= s;
    for (int64_t i = 0; i < n; ++i) {
      int64_t rest = i, offset_a = 0, offset_b = 0;
      for (int k = ops::kMaxDims - 1; k >= 0; --k) {
        const int64_t idx = rest % layout.sizes[k];
        rest /= layout.sizes[k];
        offset_a += idx * layout.strides[0][k];
        offset_b += idx * layout.strides[1][k];
      }
      ASSERT_EQ(offset_b, broadcast_offset(shape, b, i)) << "trial " << trial << " element " << i;
      ASSERT_EQ(offset_a, with_a ? broadcast_offset(shape, a, i) : 0) << "trial " << trial << " element " << i;
    }
  }
  EXPECT_GT(collapsed, 1000);
}

TEST(OpsLayout, CollapseMergesContiguousOperandsIntoOneDim) {
  const std::vector<int64_t> shape{3, 4, 5}, contiguous{20, 5, 1}, bias{5}, unit{1};
  ops::ElementwiseLayout layout;
  const ops::Operand x{shape, contiguous}, row{bias, unit};
  ASSERT_TRUE(ops::collapse(shape, &x, x, layout));
  EXPECT_EQ(layout.ndim, 1);
  EXPECT_EQ(layout.sizes[3], 60);
  EXPECT_EQ(layout.strides[0][3], 1);
  ASSERT_TRUE(ops::collapse(shape, &x, row, layout));  // a broadcast bias: (12, 5) with strides (0, 1)
  EXPECT_EQ(layout.ndim, 2);
  EXPECT_EQ(layout.sizes[2], 12);
  EXPECT_EQ(layout.strides[1][2], 0);
  const std::vector<int64_t> six{2, 2, 2, 2, 2, 2}, even{2, 1, 2, 1, 2, 1}, odd{1, 2, 1, 2, 1, 2};
  const std::vector<int64_t> even_strides{4, 0, 2, 0, 1, 0}, odd_strides{0, 4, 0, 2, 0, 1};
  const ops::Operand alternating_a{even, even_strides}, alternating_b{odd, odd_strides};
  EXPECT_FALSE(ops::collapse(six, &alternating_a, alternating_b, layout));
}

TEST(OpsLayout, ReductionPlanAddressesEveryElementAsTheTensorDoes) {
  std::mt19937_64 rng(std::random_device{}());
  int planned = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<int64_t> sizes(rng() % 5);
    for (auto& s : sizes) s = static_cast<int64_t>(rng() % 5);
    const View v = random_view(rng, sizes);
    const int64_t nd = static_cast<int64_t>(sizes.size());
    const int64_t dim = nd == 0 ? 0 : static_cast<int64_t>(rng() % nd);
    ops::Reduction plan;
    if (!ops::plan_reduction(v.sizes, v.strides, dim, plan)) continue;
    ++planned;
    EXPECT_LE(plan.block_j * plan.block_r, ops::kReductionTile);
    EXPECT_EQ(plan.block_j & (plan.block_j - 1), 0);
    EXPECT_EQ(plan.block_r & (plan.block_r - 1), 0);
    // Row j and element r are (outer multi-index, r, inner multi-index), row-major.
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= sizes[d];
    for (int64_t d = dim + 1; d < nd; ++d) inner *= sizes[d];
    const int64_t length = nd == 0 ? 1 : sizes[dim];
    ASSERT_EQ(plan.rows, outer * inner);
    ASSERT_EQ(plan.length, length);
    for (int64_t j = 0; j < plan.rows; ++j) {
      for (int64_t r = 0; r < length; ++r) {
        int64_t rest = (j / inner) * length * inner + r * inner + j % inner, want = 0;
        for (int64_t d = nd - 1; d >= 0; --d) {
          want += (rest % sizes[d]) * v.strides[d];
          rest /= sizes[d];
        }
        const int64_t got =
            (j / plan.inner) * plan.stride_outer + (j % plan.inner) * plan.stride_inner + r * plan.stride_r;
        ASSERT_EQ(got, want) << "trial " << trial << " row " << j << " element " << r;
      }
    }
  }
  EXPECT_GT(planned, 500);
}

TEST(OpsLayout, ReductionPlanOfContiguousAndColumnMajorTensors) {
  const std::vector<int64_t> sizes{3, 4, 5, 6}, strides{120, 30, 6, 1};
  ops::Reduction plan;
  for (int64_t dim = 0; dim < 4; ++dim) EXPECT_TRUE(ops::plan_reduction(sizes, strides, dim, plan)) << dim;
  ASSERT_TRUE(ops::plan_reduction(sizes, strides, 3, plan));
  EXPECT_EQ(plan.inner, 1);
  EXPECT_EQ(plan.stride_r, 1);
  EXPECT_EQ(plan.block_r, 8);
  EXPECT_EQ(plan.block_j, 64);
  const std::vector<int64_t> column_major{1, 3, 12, 60};  // dims 0..2 are no evenly strided block
  EXPECT_FALSE(ops::plan_reduction(sizes, column_major, 3, plan));
}

}  // namespace
}  // namespace tritonrt::test

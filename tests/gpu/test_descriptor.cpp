// Kernels taking host-built TMA tensor descriptors (tritonrt::TensorDescriptor), launched on a
// GPU and checked against a host reference: on Hopper and newer the launch encodes a
// CUtensorMap per descriptor, elsewhere it passes base, shape and strides (both as Triton's
// launcher does; tests/cpu/test_fake_driver_launch.cpp checks the parameters themselves).

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu_test.h"
#include "host_float.h"

namespace tritonrt::test {
namespace {

using Descriptors = GpuTest;

const std::string kDescKernels = std::string(TRITONRT_TEST_KERNELS) + "/descriptor_kernels.py";
constexpr std::size_t kGuard = 64;  // poisoned elements past the end, which no store may reach

TensorDescriptor matrix(const DeviceBuffer<std::uint16_t>& buffer, std::int64_t rows, std::int64_t cols,
                        std::int64_t block_rows, std::int64_t block_cols) {
  const std::int64_t shape[] = {rows, cols}, strides[] = {cols, 1}, block[] = {block_rows, block_cols};
  return TensorDescriptor::make(reinterpret_cast<const void*>(buffer.address()), DType::fp16, shape, strides, block);
}

// `got` (fp16, then poisoned guard elements) holds x * 2, exactly, and nothing past it.
::testing::AssertionResult doubled(const std::string& what, const std::vector<std::uint16_t>& x,
                                   const std::vector<std::uint16_t>& got) {
  Mismatches bad(what);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double want = from_fp16(x[i]) * 2.0;  // exact in fp16
    if (!(from_fp16(got[i]) == want)) bad.add(i, from_fp16(got[i]), want);
  }
  for (std::size_t i = x.size(); i < got.size(); ++i) {
    if (!is_poison(got[i])) bad.add_unpoisoned(i);
  }
  return bad.result();
}

// A 100 x 200 fp16 matrix (its tiles overhang both edges) scaled through two descriptors, on
// two pairs of buffers: the second launch is a cache hit, its maps made for the new buffers.
TEST_F(Descriptors, ScaleThroughHostDescriptors) {
  const int M = 100, N = 200;
  auto& fn = JitFunction::get(kDescKernels, "scale_2d");
  Stream s;
  for (int round = 0; round < 2; ++round) {
    std::vector<std::uint16_t> x(static_cast<std::size_t>(M) * N);
    for (auto& v : x) v = to_fp16(rng().signed_magnitude(0.5, 100.0));
    DeviceBuffer<std::uint16_t> dx(x), dout(x.size() + kGuard);
    dout.poison();
    const auto in = matrix(dx, M, N, 32, 64);
    const auto out = matrix(dout, M, N, 32, 64);
    const LaunchConfig config{.grid = {cdiv(M, 32), cdiv(N, 64)}, .stream = s.get()};
    fn(config, in, out, 2.0, 32, 64);
    s.sync();
    if (round == 0) {
      const auto artifact = fn.artifact_for(config, in, out, 2.0, 32, 64);
      EXPECT_EQ(artifact->metadata.tensordesc_meta.size(), capability() >= 90 ? 2u : 0u)
          << "TMA descriptors on Hopper and newer";
    }
    EXPECT_TRUE(doubled("scale_2d through descriptors, round " + std::to_string(round), x, dout.download()));
  }
}

// A matmul whose three operands are descriptors (the tile loop of Triton's persistent matmul
// tutorial), fp16 in, fp32 accumulation, fp16 out.
TEST_F(Descriptors, MatmulThroughHostDescriptors) {
  const int M = 256, N = 128, K = 192;
  std::vector<std::uint16_t> a(static_cast<std::size_t>(M) * K), b(static_cast<std::size_t>(K) * N);
  for (auto& v : a) v = to_fp16(rng().signed_magnitude(0.01, 1.0));
  for (auto& v : b) v = to_fp16(rng().signed_magnitude(0.01, 1.0));
  DeviceBuffer<std::uint16_t> da(a), db(b), dc(static_cast<std::size_t>(M) * N + kGuard);
  dc.poison();
  const auto a_desc = matrix(da, M, K, 128, 64);
  const auto b_desc = matrix(db, K, N, 64, 64);
  const auto c_desc = matrix(dc, M, N, 128, 64);
  Stream s;
  auto& matmul = JitFunction::get(kDescKernels, "matmul_tma");
  const LaunchConfig config{.grid = {cdiv(M, 128), cdiv(N, 64)}, .stream = s.get()};
  matmul(config, a_desc, b_desc, c_desc, K, 128, 64, 64);
  s.sync();
  EXPECT_TRUE(matches_product(
      "matmul_tma", dc.download(), M, N, K, [&](int i, int k) { return from_fp16(a[i * K + k]); },
      [&](int k, int j) { return from_fp16(b[k * N + j]); }, [](std::uint16_t v) { return from_fp16(v); }));
}

// A Gluon kernel through Gluon's host descriptors (a shared-memory layout each): Hopper's TMA
// copies 64 x 64 tiles in and out, scaled by 2 in between; the matrix's edge tiles overhang it.
TEST_F(Descriptors, GluonKernelThroughHostDescriptorsWithLayouts) {
  REQUIRE_CAPABILITY(90, "Gluon's Hopper TMA");
  const int M = 200, N = 192;
  auto& fn = JitFunction::get(std::string(TRITONRT_TEST_KERNELS) + "/gluon_kernels.py", "gluon_tma_scale");
  std::vector<std::uint16_t> x(static_cast<std::size_t>(M) * N);
  for (auto& v : x) v = to_fp16(rng().signed_magnitude(0.5, 100.0));
  DeviceBuffer<std::uint16_t> dx(x), dout(x.size() + kGuard);
  dout.poison();
  const std::int64_t block[] = {64, 64};
  auto in = matrix(dx, M, N, 64, 64);
  auto out = matrix(dout, M, N, 64, 64);
  in.set_layout(NvmmaSharedLayout::default_for(block, DType::fp16));
  out.set_layout(NvmmaSharedLayout::default_for(block, DType::fp16));
  Stream s;
  fn({.grid = {cdiv(M, 64), cdiv(N, 64)}, .stream = s.get()}, in, out, 2.0);
  s.sync();
  EXPECT_TRUE(doubled("gluon_tma_scale", x, dout.download()));
}

// Triton's persistent-matmul tutorial's way: an autotuned persistent kernel whose descriptors
// come with a placeholder block shape, set per config by the config's pre_hook (Python code
// shown the descriptors as Triton's TensorDescriptor). Tuned on the first call, looked up on
// the second with other buffers.
TEST_F(Descriptors, PersistentMatmulWithBlockShapesSetByPreHooks) {
  const int M = 512, N = 384, K = 256;  // C = A B^T, B given N x K
  auto& matmul = JitFunction::get(std::string(TRITONRT_TEST_KERNELS) + "/hopper_kernels.py", "matmul_persistent");
  const std::int64_t sms = multiprocessor_count();
  Stream s;
  LaunchConfig config{.stream = s.get()};
  config.grid_fn = [&](const BoundArgs& args) {
    return Grid{std::min(sms, cdiv(M, args.integer("BLOCK_M")) * cdiv(N, args.integer("BLOCK_N")))};
  };
  for (int round = 0; round < 2; ++round) {
    std::vector<std::uint16_t> a(static_cast<std::size_t>(M) * K), b(static_cast<std::size_t>(N) * K);
    for (auto& v : a) v = to_fp16(rng().signed_magnitude(0.01, 1.0));
    for (auto& v : b) v = to_fp16(rng().signed_magnitude(0.01, 1.0));
    DeviceBuffer<std::uint16_t> da(a), db(b), dc(static_cast<std::size_t>(M) * N + kGuard);
    dc.poison();
    matmul(config, matrix(da, M, K, 1, 1), matrix(db, N, K, 1, 1), matrix(dc, M, N, 1, 1), M, N, K, sms);
    s.sync();
    EXPECT_TRUE(matches_product(
        "matmul_persistent, round " + std::to_string(round), dc.download(), M, N, K,
        [&](int i, int k) { return from_fp16(a[i * K + k]); }, [&](int k, int j) { return from_fp16(b[j * K + k]); },
        [](std::uint16_t v) { return from_fp16(v); }));
  }
}

}  // namespace
}  // namespace tritonrt::test

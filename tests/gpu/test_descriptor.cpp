// Kernels taking host-built TMA tensor descriptors (tritonrt::TensorDescriptor), launched on a
// GPU and checked against a host reference: on Hopper and newer the launch encodes a
// CUtensorMap per descriptor, elsewhere it passes base, shape and strides (both as Triton's
// launcher does; tests/cpu/test_fake_driver_launch.cpp checks the parameters themselves).

#include <cmath>
#include <cstdint>
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
    const auto got = dout.download();
    Mismatches bad("scale_2d through descriptors, round " + std::to_string(round));
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double want = from_fp16(x[i]) * 2.0;  // exact in fp16
      if (!(from_fp16(got[i]) == want)) bad.add(i, from_fp16(got[i]), want);
    }
    for (std::size_t i = x.size(); i < got.size(); ++i) {
      if (!is_poison(got[i])) bad.add_unpoisoned(i);
    }
    EXPECT_TRUE(bad.result());
  }
}

// A matmul whose three operands are descriptors (the tile loop of Triton's persistent matmul
// tutorial), fp16 in, fp32 accumulation, fp16 out.
TEST_F(Descriptors, MatmulThroughHostDescriptors) {
  // Tolerance: relative L2 error of the whole product below 1e-2 against a double reference.
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
  const auto c = dc.download();
  double err2 = 0, ref2 = 0;
  Mismatches bad("matmul_tma (non-finite or unwritten)");
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int k = 0; k < K; ++k) want += from_fp16(a[i * K + k]) * from_fp16(b[k * N + j]);
      const double got = from_fp16(c[static_cast<std::size_t>(i) * N + j]);
      if (!std::isfinite(got)) bad.add(static_cast<std::size_t>(i) * N + j, got, want);
      err2 += (got - want) * (got - want);
      ref2 += want * want;
    }
  }
  for (std::size_t i = static_cast<std::size_t>(M) * N; i < c.size(); ++i) {
    if (!is_poison(c[i])) bad.add_unpoisoned(i);
  }
  EXPECT_TRUE(bad.result());
  EXPECT_LT(std::sqrt(err2 / ref2), 1e-2) << "relative L2 error of the product";
}

}  // namespace
}  // namespace tritonrt::test

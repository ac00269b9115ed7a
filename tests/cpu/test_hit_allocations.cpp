// What the README promises of a cache hit: no allocation, on the plain, the autotuned, the
// heuristics-driven and the descriptor path alike. This file replaces the program's global
// operator new with one that counts the calls a thread makes while it is told to; launches go
// to the stand-in driver (tests/support/fake_cuda), so only tritonrt's own path is counted.

#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "fake_cuda.h"
#include "tritonrt/tritonrt.h"

// AddressSanitizer brings its own operator new, which a replacement here would fight: under it
// the count is not taken (the plain build takes it).
#if defined(__SANITIZE_ADDRESS__)
#define TRITONRT_COUNTS_ALLOCATIONS 0
#else
#define TRITONRT_COUNTS_ALLOCATIONS 1
#endif

namespace {
thread_local bool g_counting = false;
thread_local std::size_t g_allocations = 0;
}  // namespace

#if TRITONRT_COUNTS_ALLOCATIONS
// The replacements pair malloc with free; GCC's check cannot see that they are the pair.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

void* operator new(std::size_t size) {
  if (g_counting) ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif

namespace tritonrt::test {
namespace {

const std::string kFrontendKernels = std::string(TRITONRT_TEST_KERNELS) + "/frontend_kernels.py";
const std::string kDescriptorKernels = std::string(TRITONRT_TEST_KERNELS) + "/descriptor_kernels.py";
const std::string kTupleKernels = std::string(TRITONRT_TEST_KERNELS) + "/tuple_kernels.py";

alignas(16) float g_x_data[4096];
alignas(16) float g_out_data[4096];
float* const g_x = g_x_data;
float* const g_out = g_out_data;
alignas(16) std::uint16_t g_tiles[128 * 128];

// The allocations `launch` makes on its tenth call (the first ones compile, load and tune).
template <class F>
std::size_t allocations_of_a_hit(F&& launch) {
  for (int i = 0; i < 9; ++i) launch();
  g_allocations = 0;
  g_counting = true;
  launch();
  g_counting = false;
  return g_allocations;
}

class HitAllocations : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!TRITONRT_COUNTS_ALLOCATIONS)
      GTEST_SKIP() << "AddressSanitizer replaces operator new: counted in the plain build";
    try {
      (void)Target::current();
    } catch (const DriverError& e) {
      GTEST_SKIP() << "no CUDA driver could be loaded; put the fake's directory on LD_LIBRARY_PATH: " << e.what();
    }
    if (!fake_cuda_api(&fake_)) GTEST_SKIP() << "the libcuda.so.1 loaded is a real driver, not tritonrt's fake";
    fake_.reset();
    fake_.set_kernel_duration_us(nullptr, 20000);  // tuning: a few timed launches per config
  }
  void TearDown() override {
    if (fake_.reset != nullptr) fake_.reset();
  }
  FakeCudaApi fake_{};
};

TEST_F(HitAllocations, NoneOnAnyPath) {
  auto& plain = JitFunction::get(kFrontendKernels, "add_kernel");
  auto& tuned = JitFunction::get(kFrontendKernels, "tuned_kernel");
  auto& heuristic = JitFunction::get(kFrontendKernels, "heuristic_kernel");
  auto& descriptors = JitFunction::get(kDescriptorKernels, "matmul_tma");
  LaunchConfig config;
  config.grid = Grid{4};
  const std::int64_t shape[] = {128, 128}, strides[] = {128, 1}, block[] = {64, 64};
  const auto tile = TensorDescriptor::make(g_tiles, DType::fp16, shape, strides, block);
  EXPECT_EQ(allocations_of_a_hit([&] { plain(config, g_x, g_x, g_out, 4096); }), 0u) << "plain";
  EXPECT_EQ(allocations_of_a_hit([&] { tuned(config, g_x, g_out, 4096); }), 0u) << "autotuned";
  EXPECT_EQ(allocations_of_a_hit([&] { heuristic(config, g_x, g_out, 4096); }), 0u) << "heuristics";
  EXPECT_EQ(allocations_of_a_hit([&] { descriptors(config, tile, tile, tile, 128, 64, 64, 64); }), 0u) << "descriptors";
  auto& tuples = JitFunction::get(kTupleKernels, "tuple_combine");
  const auto coeffs = std::make_tuple(std::make_pair(2.0, 1), std::make_tuple(3, std::nullopt));
  EXPECT_EQ(allocations_of_a_hit([&] { tuples(config, std::make_pair(g_x, g_x), g_out, coeffs, 4096, 128); }), 0u)
      << "tuples";
  auto& tile_shape = JitFunction::get(kTupleKernels, "tuple_shape");
  EXPECT_EQ(allocations_of_a_hit([&] { tile_shape(config, g_x, g_out, 64, std::make_pair(16, 32)); }), 0u)
      << "a constexpr tuple";
}

}  // namespace
}  // namespace tritonrt::test

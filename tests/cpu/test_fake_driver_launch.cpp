// tritonrt's launch path end to end without a GPU: kernels compiled by Triton for real and
// launched against the stand-in driver (tests/support/fake_cuda), whose launch records show
// what reached cuLaunchKernel. Needs the fake's directory on LD_LIBRARY_PATH (ctest sets it).

#include <cuda.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fake_cuda.h"
#include "fake_launch.h"
#include "test_driver.h"
#include "tritonrt/tritonrt.h"

namespace tritonrt::test {
namespace {

const std::string kSource = std::string(TRITONRT_TEST_KERNELS) + "/fake_launch_kernels.py";

// Host arrays stand in for device memory: kernels never run, only their addresses are passed.
alignas(16) float g_in_data[1024];
alignas(16) float g_out_data[1024];
alignas(16) std::uint16_t g_a_data[128 * 256];
alignas(16) std::uint16_t g_b_data[256 * 128];
alignas(16) float g_c_data[128 * 128];
float* const g_in = g_in_data;
float* const g_out = g_out_data;
float* const g_c = g_c_data;

TEST_F(FakeDriverLaunch, CompilesForTheFakeDevicesTarget) {
  const char* cc = std::getenv("TRITONRT_FAKE_CUDA_CC");
  EXPECT_EQ(Target::current().str(), std::string("cuda:") + (cc ? cc : "90"));
  auto& fn = JitFunction::get(kSource, "typed_args");
  const auto artifact =
      fn.artifact_for(grid(1), g_out, g_in, 1000, -(std::int64_t{1} << 40), 0.5, scalar(DType::fp16, 1.5), 256);
  EXPECT_EQ(artifact->metadata.target, Target::current());
  EXPECT_EQ(stats().launches, 0u);  // resolving the artifact launches nothing
}

TEST_F(FakeDriverLaunch, PassesTheParameterBytesTritonsLauncherPasses) {
  auto& fn = JitFunction::get(kSource, "typed_args");
  const std::int64_t big = -(std::int64_t{1} << 40);  // beyond i32: Triton types it i64
  fn(grid(3, 2), g_out, g_in, 1000, big, 0.5, scalar(DType::fp16, 1.5), 128);
  const auto artifact = fn.artifact_for(grid(3, 2), g_out, g_in, 1000, big, 0.5, scalar(DType::fp16, 1.5), 128);
  ASSERT_EQ(stats().launches, 1u);

  const FakeCudaLaunch launch = last_launch();
  EXPECT_STREQ(launch.name, "typed_args");
  EXPECT_EQ(launch.grid[0], 3u);
  EXPECT_EQ(launch.grid[1], 2u);
  EXPECT_EQ(launch.grid[2], 1u);
  EXPECT_EQ(launch.block[0], static_cast<unsigned>(artifact->metadata.num_warps * 32));
  EXPECT_EQ(launch.block[1], 1u);
  EXPECT_EQ(launch.block[2], 1u);
  EXPECT_EQ(launch.shared_bytes, static_cast<unsigned>(artifact->metadata.shared));
  EXPECT_EQ(launch.stream, nullptr);
  EXPECT_FALSE(launch.via_ex);  // no cluster, PDL or cooperative launch: plain cuLaunchKernel

  // The runtime arguments in order (BLOCK is compiled in), then the two scratch pointers.
  ASSERT_EQ(launch.param_count, 8u);
  EXPECT_EQ(param<std::uint64_t>(launch, 0), reinterpret_cast<std::uintptr_t>(g_out));
  EXPECT_EQ(param<std::uint64_t>(launch, 1), reinterpret_cast<std::uintptr_t>(g_in));
  const unsigned char n_bytes[4] = {0xe8, 0x03, 0x00, 0x00};  // 1000 as a little-endian i32
  EXPECT_EQ(param<std::int32_t>(launch, 2), 1000);
  EXPECT_EQ(std::memcmp(fake_cuda_param(&launch, 2), n_bytes, 4), 0);
  const unsigned char big_bytes[8] = {0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff};
  EXPECT_EQ(param<std::int64_t>(launch, 3), big);
  EXPECT_EQ(std::memcmp(fake_cuda_param(&launch, 3), big_bytes, 8), 0);
  EXPECT_EQ(param<std::uint32_t>(launch, 4), std::bit_cast<std::uint32_t>(0.5f));  // a double, passed as fp32
  EXPECT_EQ(param<std::uint16_t>(launch, 5), 0x3e00u);                             // 1.5 as fp16
  EXPECT_EQ(param<std::uint64_t>(launch, 6), 0u);  // global scratch: this kernel needs none
  EXPECT_EQ(param<std::uint64_t>(launch, 7), 0u);  // profile scratch
}

// "3.9.0" as comparable numbers.
struct Version {
  int major = 0, minor = 0;
  explicit Version(const std::string& text) { std::sscanf(text.c_str(), "%d.%d", &major, &minor); }
  friend bool operator>=(const Version& a, const Version& b) {
    return a.major != b.major ? a.major > b.major : a.minor >= b.minor;
  }
};

// 64 x 128 fp16 tensors, described with their rows 32 x 64 at a time unless told otherwise.
alignas(16) std::uint16_t g_tile_in[64 * 128];
alignas(16) std::uint16_t g_tile_out[64 * 128];

TensorDescriptor tile_desc(const void* base, std::int64_t block_m = 32,
                           TensorDescriptor::Padding padding = TensorDescriptor::Padding::zero) {
  const std::int64_t shape[] = {64, 128}, strides[] = {128, 1}, block[] = {block_m, 64};
  return TensorDescriptor::make(base, DType::fp16, shape, strides, block, padding);
}

// As Triton's launcher expands a descriptor: on a target with TMA (here cuda:90) the
// CUtensorMap its metadata describes, then the shape (i32) and strides (i64); without TMA
// (TRITONRT_FAKE_CUDA_CC=80, a ctest entry of its own) the base, shape and strides (i64), the
// NaN-padding flag, then the shape (i32) and strides (i64) again.
TEST_F(FakeDriverLaunch, ExpandsTensorDescriptorsAsTritonsLauncher) {
  const std::string source = std::string(TRITONRT_TEST_KERNELS) + "/descriptor_kernels.py";
  auto& fn = JitFunction::get(source, "scale_2d");
  const auto in = tile_desc(g_tile_in, 32, TensorDescriptor::Padding::nan);
  const auto out = tile_desc(g_tile_out);
  fn(grid(2, 2), in, out, 2.0, 32, 64);
  const auto artifact = fn.artifact_for(grid(2, 2), in, out, 2.0, 32, 64);
  ASSERT_EQ(stats().launches, 1u);
  const FakeCudaLaunch launch = last_launch();
  const auto& metas = artifact->metadata.tensordesc_meta;
  const TensorDescriptor* descs[] = {&in, &out};
  if (Target::current().arch == "90") {
    ASSERT_EQ(metas.size(), 2u);
    ASSERT_EQ(launch.param_count, 2u * 5 + 1 + 2);
    for (unsigned k = 0; k < 2; ++k) {
      const unsigned p = k * 5;
      ASSERT_EQ(launch.param_size[p], 128u) << "a CUtensorMap, by value";
      FakeCudaTensorMap map;
      std::memcpy(&map, fake_cuda_param(&launch, p), sizeof map);
      EXPECT_EQ(map.magic, FAKE_CUDA_TENSOR_MAP_MAGIC);
      EXPECT_EQ(map.address, reinterpret_cast<std::uintptr_t>(descs[k]->base()));
      EXPECT_EQ(map.data_type, CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
      EXPECT_EQ(map.rank, 2);
      EXPECT_EQ(map.dims[0], 128u);  // innermost first
      EXPECT_EQ(map.dims[1], 64u);
      EXPECT_EQ(map.strides[0], 256u);  // one row of 128 fp16, in bytes
      EXPECT_EQ(map.box[0], static_cast<std::uint32_t>(metas[k].block_size[1]));
      EXPECT_EQ(map.box[1], static_cast<std::uint32_t>(metas[k].block_size[0]));
      EXPECT_EQ(map.element_strides[0], 1);
      EXPECT_EQ(map.element_strides[1], 1);
      EXPECT_EQ(map.swizzle, metas[k].swizzle);
      EXPECT_EQ(map.interleave, CU_TENSOR_MAP_INTERLEAVE_NONE);
      EXPECT_EQ(map.l2_promotion, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
      EXPECT_EQ(map.fill,
                k == 0 ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
      EXPECT_EQ(param<std::int32_t>(launch, p + 1), 64);
      EXPECT_EQ(param<std::int32_t>(launch, p + 2), 128);
      EXPECT_EQ(param<std::int64_t>(launch, p + 3), 128);
      EXPECT_EQ(param<std::int64_t>(launch, p + 4), 1);
    }
    EXPECT_EQ(param<std::uint32_t>(launch, 10), std::bit_cast<std::uint32_t>(2.0f));
  } else {
    EXPECT_TRUE(metas.empty());
    // The flags after the strides: NaN padding, and from Triton 3.9 round_f32_to_tf32 too.
    const unsigned flags = Version(triton_version()) >= Version("3.9") ? 2 : 1;
    const unsigned per = 9 + flags;
    ASSERT_EQ(launch.param_count, 2u * per + 1 + 2);
    for (unsigned k = 0; k < 2; ++k) {
      const unsigned p = k * per;
      EXPECT_EQ(param<std::uint64_t>(launch, p), reinterpret_cast<std::uintptr_t>(descs[k]->base()));
      EXPECT_EQ(param<std::int64_t>(launch, p + 1), 64);
      EXPECT_EQ(param<std::int64_t>(launch, p + 2), 128);
      EXPECT_EQ(param<std::int64_t>(launch, p + 3), 128);
      EXPECT_EQ(param<std::int64_t>(launch, p + 4), 1);
      EXPECT_EQ(param<std::uint8_t>(launch, p + 5), k == 0 ? 1 : 0);  // NaN padding
      if (flags == 2) {
        EXPECT_EQ(param<std::uint8_t>(launch, p + 6), 0);  // no tf32 rounding
      }
      EXPECT_EQ(param<std::int32_t>(launch, p + 5 + flags), 64);
      EXPECT_EQ(param<std::int32_t>(launch, p + 6 + flags), 128);
      EXPECT_EQ(param<std::int64_t>(launch, p + 7 + flags), 128);
      EXPECT_EQ(param<std::int64_t>(launch, p + 8 + flags), 1);
    }
    EXPECT_EQ(param<std::uint32_t>(launch, 2 * per), std::bit_cast<std::uint32_t>(2.0f));
  }
  const auto loads = stats().module_loads;
  const std::uint64_t encoded = metas.empty() ? 0 : 2;
  EXPECT_EQ(stats().tensor_maps_encoded, encoded);
  // The same descriptors again: the maps this thread encoded are reused, not encoded again.
  fn(grid(2, 2), in, out, 2.0, 32, 64);
  EXPECT_EQ(stats().tensor_maps_encoded, encoded);
  const FakeCudaLaunch repeated = last_launch();
  EXPECT_EQ(std::memcmp(launch.params, repeated.params, launch.param_bytes), 0) << "the same parameters";
  // The same block shapes over other memory: the same kernel, with the new address.
  const auto moved = tile_desc(g_tile_out, 32, TensorDescriptor::Padding::nan);
  fn(grid(2, 2), moved, out, 2.0, 32, 64);
  EXPECT_EQ(stats().module_loads, loads);
  EXPECT_EQ(stats().tensor_maps_encoded, metas.empty() ? 0u : 3u) << "one new map, the other one reused";
  const FakeCudaLaunch again = last_launch();
  std::uint64_t address;
  std::memcpy(&address, fake_cuda_param(&again, 0) + (metas.empty() ? 0 : offsetof(FakeCudaTensorMap, address)),
              sizeof address);
  EXPECT_EQ(address, reinterpret_cast<std::uintptr_t>(g_tile_out));
  // Another block shape is another specialization, so another kernel.
  fn(grid(4, 2), tile_desc(g_tile_in, 16), tile_desc(g_tile_out, 16), 2.0, 16, 64);
  EXPECT_EQ(stats().module_loads, loads + 1);
}

// A launch's maps are read where the thread keeps its recent ones, unless a map encoded later in
// the same launch takes the slot of an earlier one: one descriptor kept, the other new on every
// call, so that within 16 launches a new map replaces the slot the kept one is read from.
TEST_F(FakeDriverLaunch, AMapEncodedInALaunchLeavesItsEarlierMapsIntact) {
  if (Target::current().arch != "90") GTEST_SKIP() << "TMA maps are encoded for cuda:90 targets only";
  const std::string source = std::string(TRITONRT_TEST_KERNELS) + "/descriptor_kernels.py";
  auto& fn = JitFunction::get(source, "scale_2d");
  const auto kept = tile_desc(g_tile_in);
  for (std::size_t k = 0; k < 16; ++k) {
    const auto fresh = tile_desc(g_tile_out + 8 * (k + 1));  // 16 bytes further each time
    fn(grid(2, 2), kept, fresh, 2.0, 32, 64);
    const FakeCudaLaunch launch = last_launch();
    FakeCudaTensorMap maps[2];
    std::memcpy(&maps[0], fake_cuda_param(&launch, 0), sizeof maps[0]);
    std::memcpy(&maps[1], fake_cuda_param(&launch, 5), sizeof maps[1]);
    EXPECT_EQ(maps[0].address, reinterpret_cast<std::uintptr_t>(g_tile_in)) << "launch " << k;
    EXPECT_EQ(maps[1].address, reinterpret_cast<std::uintptr_t>(fresh.base())) << "launch " << k;
  }
}

// A parameter that takes a pointer on one call and a descriptor on the next (or the other way
// round) is another specialization each time, never a descriptor compared with a pointer.
TEST_F(FakeDriverLaunch, APointerAndADescriptorForOneParameterAreTwoKernels) {
  const std::string source = std::string(TRITONRT_TEST_KERNELS) + "/descriptor_kernels.py";
  auto& fn = JitFunction::get(source, "load_either");
  const std::int64_t shape[] = {16, 16}, strides[] = {16, 1};
  const auto d = TensorDescriptor::make(g_tile_in, DType::fp16, shape, strides, shape);
  const DevicePtr p{g_tile_in, DType::fp16};
  const DevicePtr out{g_tile_out, DType::fp16};
  fn(grid(1), p, out, 16);
  fn(grid(1), d, out, 16);
  fn(grid(1), p, out, 16);
  fn(grid(1), d, out, 16);
  EXPECT_EQ(stats().launches, 4u);
  EXPECT_EQ(stats().module_loads, 2u);
  EXPECT_NE(fn.artifact_for(grid(1), p, out, 16)->metadata.hash, fn.artifact_for(grid(1), d, out, 16)->metadata.hash);
}

struct MatmulDescriptors {
  TensorDescriptor a, b, c;
};

// A 128 x 256, B 256 x 128 and C 128 x 128 (fp16, row-major), with the block shape [1, 1] that
// Triton's persistent-matmul tutorial (and FlagGems) give descriptors before a config's hook
// sets their tiles.
MatmulDescriptors placeholder_matmul_descriptors() {
  const std::int64_t placeholder[] = {1, 1}, a_shape[] = {128, 256}, b_shape[] = {256, 128}, c_shape[] = {128, 128};
  const std::int64_t a_strides[] = {256, 1}, n_strides[] = {128, 1};
  return {TensorDescriptor::make(g_a_data, DType::fp16, a_shape, a_strides, placeholder),
          TensorDescriptor::make(g_b_data, DType::fp16, b_shape, n_strides, placeholder),
          TensorDescriptor::make(g_c_data, DType::fp16, c_shape, n_strides, placeholder)};
}

// Launches matmul_tma_tuned-like kernels (descriptor_kernels.py) with those descriptors: each
// config by choice, then tuned; the maps launched must have the tiles of the config that ran.
void expect_tiles_of_the_config_that_ran(JitFunction& fn, const FakeCudaApi& fake) {
  const auto [a, b, c] = placeholder_matmul_descriptors();
  LaunchConfig config;
  config.grid_fn = [](const BoundArgs& args) {
    return Grid{cdiv(128, args.integer("BLOCK_M")), cdiv(128, args.integer("BLOCK_N"))};
  };
  const bool tma = Target::current().arch == "90";
  fake.set_kernel_duration_us(nullptr, 20000);  // tuning: a few timed launches per config, each after its hook
  // (rows, columns) of each descriptor's tiles, per config: {64, 64, 32} and {128, 64, 64}.
  const std::int64_t tiles[2][3][2] = {{{64, 32}, {32, 64}, {64, 64}}, {{128, 64}, {64, 64}, {128, 64}}};
  for (const std::ptrdiff_t chosen : {1, 0, -1}) {  // each config by choice, then tuned
    config.autotune_config = chosen;
    fn(config, a, b, c, 256);
    FakeCudaLaunch launch{};
    ASSERT_EQ(fake.last_launches(&launch, 1), 1u);
    const int ran = launch.grid[0] == 2 ? 0 : 1;  // 128 / BLOCK_M
    if (chosen >= 0) {
      EXPECT_EQ(ran, chosen);
    }
    EXPECT_EQ(launch.grid[1], 2u);
    if (!tma) continue;
    for (unsigned k = 0; k < 3; ++k) {
      FakeCudaTensorMap map;
      std::memcpy(&map, fake_cuda_param(&launch, k * 5), sizeof map);
      EXPECT_EQ(map.box[1], static_cast<std::uint32_t>(tiles[ran][k][0])) << "descriptor " << k;
      EXPECT_EQ(map.box[0], static_cast<std::uint32_t>(tiles[ran][k][1])) << "descriptor " << k;
    }
  }
  EXPECT_EQ(a.block_shape()[0], 1) << "the caller's descriptors stay as they were";
  EXPECT_EQ(c.block_shape()[1], 1);
  fake.set_kernel_duration_us(nullptr, 1);
}

TEST_F(FakeDriverLaunch, AConfigPreHookSetsTheTilesOfTheMapsLaunched) {
  const std::string source = std::string(TRITONRT_TEST_KERNELS) + "/descriptor_kernels.py";
  expect_tiles_of_the_config_that_ran(JitFunction::get(source, "matmul_tma_tuned"), fake_);
}

// The same tiles set by a C++ config hook: the Python pre_hooks, which raise, never run, on
// the tuning, the chosen-config or the hit path.
TEST_F(FakeDriverLaunch, ACppConfigHookSetsTheTilesOfTheMapsLaunched) {
  const std::string source = std::string(TRITONRT_TEST_KERNELS) + "/descriptor_kernels.py";
  auto& fn = JitFunction::get(source, "matmul_tma_cpp_hook");
  fn.set_config_hook([](const BoundArgs& args, BlockShapes& tiles) {
    const std::int64_t m = args.integer("BLOCK_M"), n = args.integer("BLOCK_N"), k = args.integer("BLOCK_K");
    tiles.set("a_desc", {m, k});
    tiles.set("b_desc", {k, n});
    tiles.set("c_desc", {m, n});
  });
  expect_tiles_of_the_config_that_ran(fn, fake_);
}

// A's tile in the tensor map of the last launch, "rows x columns".
std::string a_tile(const FakeCudaApi& fake) {
  FakeCudaLaunch launch{};
  if (fake.last_launches(&launch, 1) != 1) return "no launch";
  FakeCudaTensorMap map;
  std::memcpy(&map, fake_cuda_param(&launch, 0), sizeof map);
  return std::to_string(map.box[1]) + "x" + std::to_string(map.box[0]);
}

// A config pre_hook's memoized effect served whole on repeated calls (the call remembered with
// the tiles it launched), then a C++ config hook set after them: it takes over from the next
// call and runs on every call; unset, the Python hooks' effect serves again.
TEST_F(FakeDriverLaunch, ACppConfigHookSetAfterRememberedCallsRunsOnEveryCall) {
  const std::string source = std::string(TRITONRT_TEST_KERNELS) + "/descriptor_kernels.py";
  auto& fn = JitFunction::get(source, "matmul_tma_tuned");
  const bool tma = Target::current().arch == "90";
  const auto [a, b, c] = placeholder_matmul_descriptors();
  LaunchConfig config;
  config.grid = Grid{2, 2};
  config.autotune_config = 0;  // BLOCK_M 64, BLOCK_N 64, BLOCK_K 32: A's tile 64 x 32
  for (int i = 0; i < 3; ++i) {
    fn(config, a, b, c, 256);
    if (tma) {
      EXPECT_EQ(a_tile(fake_), "64x32") << "call " << i;
    }
  }
  int runs = 0;
  fn.set_config_hook([&runs](const BoundArgs& args, BlockShapes& tiles) {
    ++runs;
    const std::int64_t m = args.integer("BLOCK_M"), n = args.integer("BLOCK_N"), k = args.integer("BLOCK_K");
    tiles.set("a_desc", {m, k});
    tiles.set("b_desc", {k, n});
    tiles.set("c_desc", {m, n});
  });
  for (int i = 0; i < 3; ++i) fn(config, a, b, c, 256);
  fn.set_config_hook({});
  EXPECT_EQ(runs, 3);
  fn(config, a, b, c, 256);
  EXPECT_EQ(runs, 3) << "the unset C++ hook ran";
  if (tma) {
    EXPECT_EQ(a_tile(fake_), "64x32");
  }
  EXPECT_EQ(stats().launches, 7u);
}

// A config's pre_hook that only sets block shapes from what it read (the config's values and
// A's layout, as FlagGems' Hopper matmul) is memoized on that: a call that reads another
// layout gets its own tiles, never the first call's; one that reads the same gets the first's.
TEST_F(FakeDriverLaunch, AConfigPreHookIsMemoizedOnWhatItReads) {
  if (Target::current().arch != "90") GTEST_SKIP() << "tensor maps (whose tiles are checked) are launched on sm_90";
  const std::string source = std::string(TRITONRT_TEST_KERNELS) + "/descriptor_kernels.py";
  auto& fn = JitFunction::get(source, "matmul_tma_layouts");
  const std::int64_t placeholder[] = {1, 1}, mk[] = {128, 256}, km[] = {256, 128}, mn[] = {128, 128};
  const std::int64_t mk_strides[] = {256, 1}, km_strides[] = {128, 1};
  const auto row_major = TensorDescriptor::make(g_a_data, DType::fp16, mk, mk_strides, placeholder);
  const auto column_major = TensorDescriptor::make(g_a_data, DType::fp16, km, km_strides, placeholder);
  const auto b = TensorDescriptor::make(g_b_data, DType::fp16, km, km_strides, placeholder);
  const auto c = TensorDescriptor::make(g_c_data, DType::fp16, mn, km_strides, placeholder);
  // A first call whose A already has the tile the hook sets: the memo keeps the tile the hook
  // wrote, not "no change", so a later call with the placeholder gets it too.
  const std::int64_t tile[] = {64, 32};
  const auto tiled = TensorDescriptor::make(g_a_data, DType::fp16, mk, mk_strides, tile);
  LaunchConfig first;
  first.grid = Grid{2, 2};
  first.autotune_config = 0;
  fn(first, tiled, b, c, 256, true);
  fn(first, row_major, b, c, 256, true);
  EXPECT_EQ(a_tile(fake_), "64x32") << "the placeholder was launched";
  for (const std::ptrdiff_t chosen : {0, 1}) {
    LaunchConfig config;
    config.grid = Grid{2, 2};
    config.autotune_config = chosen;
    // The second config's [64, 128] tile of column-major A is loaded in 64-column boxes (128
    // bytes of fp16, the swizzle's width), as Triton's metadata for it says.
    const std::string rows_first = chosen == 0 ? "64x32" : "128x64", k_first = chosen == 0 ? "32x64" : "64x64";
    fn(config, row_major, b, c, 256, true);
    EXPECT_EQ(a_tile(fake_), rows_first);
    fn(config, column_major, b, c, 256, false);
    EXPECT_EQ(a_tile(fake_), k_first) << "the tiles of the other layout were served";
    fn(config, row_major, b, c, 256, true);
    EXPECT_EQ(a_tile(fake_), rows_first);
  }
  EXPECT_EQ(row_major.block_shape()[0], 1) << "the caller's descriptors stay as they were";
}

// A hook that tests whether an argument is a descriptor (as Triton's fused-attention tutorial
// does) is memoized on that: a pointer call's memo never serves a descriptor call, nor the
// other way round.
TEST_F(FakeDriverLaunch, AConfigPreHookIsMemoizedOnWhetherAnArgumentIsADescriptor) {
  if (Target::current().arch != "90") GTEST_SKIP() << "tensor maps (whose tiles are checked) are launched on sm_90";
  const std::string source = std::string(TRITONRT_TEST_KERNELS) + "/descriptor_kernels.py";
  auto& fn = JitFunction::get(source, "load_either_tiled");
  const std::int64_t shape[] = {16, 16}, strides[] = {16, 1}, placeholder[] = {1, 1};
  const auto d = TensorDescriptor::make(g_tile_in, DType::fp16, shape, strides, placeholder);
  const DevicePtr p{g_tile_in, DType::fp16};
  const DevicePtr out{g_tile_out, DType::fp16};
  fn(grid(1), p, out);
  fn(grid(1), d, out);
  EXPECT_EQ(a_tile(fake_), "16x16") << "the pointer call's memo served the descriptor call";
  fn(grid(1), p, out);
  fn(grid(1), d, out);
  EXPECT_EQ(a_tile(fake_), "16x16");
  EXPECT_EQ(stats().launches, 4u);
}

// The log's lines about pre_hooks at info level, while it lives.
struct HookLog {
  HookLog() : level(log_level()) {
    set_log_level(LogLevel::info);
    set_log_handler([this](LogLevel, std::string_view message) {
      if (message.find("pre_hook") != std::string_view::npos) messages.emplace_back(message);
    });
  }
  ~HookLog() {
    set_log_handler({});
    set_log_level(level);
  }
  LogLevel level;
  std::vector<std::string> messages;
};

// A pre_hook that reads a descriptor's own fields cannot be memoized: it runs in Python on
// every call, which is logged once, saying what it read.
TEST_F(FakeDriverLaunch, AConfigPreHookReadingADescriptorRunsEveryCallAndSaysWhy) {
  const std::string source = std::string(TRITONRT_TEST_KERNELS) + "/descriptor_kernels.py";
  auto& fn = JitFunction::get(source, "matmul_tma_shape_hook");
  HookLog said;
  const std::int64_t placeholder[] = {1, 1}, mk[] = {128, 16}, kn[] = {16, 128}, mn[] = {128, 128};
  const std::int64_t mk_strides[] = {16, 1}, n_strides[] = {128, 1};
  const auto a = TensorDescriptor::make(g_a_data, DType::fp16, mk, mk_strides, placeholder);
  const auto b = TensorDescriptor::make(g_b_data, DType::fp16, kn, n_strides, placeholder);
  const auto c = TensorDescriptor::make(g_c_data, DType::fp16, mn, n_strides, placeholder);
  LaunchConfig config;
  config.grid = Grid{2, 2};
  config.autotune_config = 0;
  for (int i = 0; i < 3; ++i) fn(config, a, b, c, 16);
  if (Target::current().arch == "90") {
    EXPECT_EQ(a_tile(fake_), "64x16");  // K 16 < BLOCK_K 32: the hook's min
  }
  ASSERT_EQ(said.messages.size(), 1u);
  const std::string& message = said.messages[0];
  EXPECT_NE(message.find("kernel 'matmul_tma_shape_hook': the pre_hook of autotune config {BLOCK_M: 64"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("runs in Python on every call: it reads a_desc.shape"), std::string::npos) << message;
}

// A pre_hook that zeroes a tensor does more than a memo can repeat: it runs on every call (the
// output is zeroed each time), which is logged once, saying what it did.
TEST_F(FakeDriverLaunch, AConfigPreHookThatZeroesATensorRunsEveryCall) {
  const std::string source = std::string(TRITONRT_TEST_KERNELS) + "/descriptor_kernels.py";
  auto& fn = JitFunction::get(source, "load_zeroed");
  HookLog said;
  const std::int64_t shape[] = {16, 16}, strides[] = {16, 1}, placeholder[] = {1, 1};
  const auto src = TensorDescriptor::make(g_tile_in, DType::fp16, shape, strides, placeholder);
  auto& driver = TestDriver::get();
  CUdeviceptr memory = 0;  // the stand-in zeroes only memory it allocated
  ASSERT_EQ(driver.cuMemAlloc(&memory, 512), CUDA_SUCCESS);
  const DevicePtr out{reinterpret_cast<const void*>(memory), DType::fp16, 512};
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(driver.cuMemsetD8(memory, 0x3c, 512), CUDA_SUCCESS);
    fn(grid(1), src, out);
    unsigned char left[512];
    ASSERT_EQ(driver.cuMemcpyDtoH(left, memory, sizeof left), CUDA_SUCCESS);
    EXPECT_EQ(std::count(std::begin(left), std::end(left), 0), 512) << "call " << i << ": the hook did not run";
  }
  (void)driver.cuMemFree(memory);
  ASSERT_EQ(said.messages.size(), 1u);
  EXPECT_NE(said.messages[0].find("runs in Python on every call: it calls zero_() on 'out_ptr'"), std::string::npos)
      << said.messages[0];
}

TEST_F(FakeDriverLaunch, AnAutotunerKeyedOnADescriptorIsAnArgumentError) {
  const std::string source = std::string(TRITONRT_TEST_KERNELS) + "/descriptor_kernels.py";
  auto& fn = JitFunction::get(source, "keyed_on_descriptor");
  const std::int64_t shape[] = {16, 16}, strides[] = {16, 1};
  const auto d = TensorDescriptor::make(g_tile_in, DType::fp16, shape, strides, shape);
  try {
    fn(grid(1), d, DevicePtr{g_tile_out, DType::fp16});
    ADD_FAILURE() << "a descriptor in the tuning key was accepted";
  } catch (const ArgumentError& e) {
    EXPECT_NE(
        std::string(e.what()).find("parameter 'src' (#0): is a tensor descriptor, and its autotuner's key names it"),
        std::string::npos)
        << e.what();
  }
  EXPECT_EQ(stats().launches, 0u);
}

// A tuple's runtime elements are kernel parameters in order, depth first, as Triton's launcher
// flattens them; its constexpr elements (1, None) are compiled in. The tuple's shape and
// element types are part of the key: another one loads another kernel, the same one hits.
TEST_F(FakeDriverLaunch, PassesATuplesRuntimeElementsInOrder) {
  const std::string source = std::string(TRITONRT_TEST_KERNELS) + "/tuple_kernels.py";
  auto& fn = JitFunction::get(source, "tuple_combine");
  const DevicePtr half{g_a_data, DType::fp16};
  fn(grid(2), std::make_tuple(g_in, half), g_out,
     std::make_tuple(std::make_pair(2.0, 1), std::make_tuple(std::int64_t{1} << 40, std::nullopt)), 1000, 128);
  ASSERT_EQ(stats().launches, 1u);
  const FakeCudaLaunch launch = last_launch();
  ASSERT_EQ(launch.param_count, 8u);  // srcs (2), out_ptr, 2.0, 1 << 40, n, then the two scratch pointers
  EXPECT_EQ(param<std::uint64_t>(launch, 0), reinterpret_cast<std::uintptr_t>(g_in));
  EXPECT_EQ(param<std::uint64_t>(launch, 1), reinterpret_cast<std::uintptr_t>(g_a_data));
  EXPECT_EQ(param<std::uint64_t>(launch, 2), reinterpret_cast<std::uintptr_t>(g_out));
  EXPECT_EQ(param<std::uint32_t>(launch, 3), std::bit_cast<std::uint32_t>(2.0f));
  EXPECT_EQ(param<std::int64_t>(launch, 4), std::int64_t{1} << 40);
  EXPECT_EQ(param<std::int32_t>(launch, 5), 1000);

  // Other values, same specialization: a hit, with this call's values.
  fn(grid(2), std::make_tuple(g_in + 4, half), g_out + 4,
     std::make_tuple(std::make_pair(0.5f, 1), std::make_tuple(std::int64_t{3} << 40, std::nullopt)), 999, 128);
  EXPECT_EQ(stats().module_loads, 1u);
  const FakeCudaLaunch hit = last_launch();
  EXPECT_EQ(hit.function, launch.function);
  EXPECT_EQ(param<std::uint64_t>(hit, 0), reinterpret_cast<std::uintptr_t>(g_in + 4));
  EXPECT_EQ(param<std::uint32_t>(hit, 3), std::bit_cast<std::uint32_t>(0.5f));
  EXPECT_EQ(param<std::int64_t>(hit, 4), std::int64_t{3} << 40);
  EXPECT_EQ(param<std::int32_t>(hit, 5), 999);

  // A bias in place of None: one more runtime element, another kernel.
  fn(grid(2), std::make_tuple(g_in, half), g_out,
     std::make_tuple(std::make_pair(2.0, 1), std::make_tuple(std::int64_t{1} << 40, 0.25)), 1000, 128);
  EXPECT_EQ(stats().module_loads, 2u);
  const FakeCudaLaunch biased = last_launch();
  EXPECT_NE(biased.function, launch.function);
  ASSERT_EQ(biased.param_count, 9u);
  EXPECT_EQ(param<std::uint32_t>(biased, 5), std::bit_cast<std::uint32_t>(0.25f));
  EXPECT_EQ(param<std::int32_t>(biased, 6), 1000);
  // The first specialization again: still loaded.
  fn(grid(2), std::make_tuple(g_in, half), g_out,
     std::make_tuple(std::make_pair(2.0, 1), std::make_tuple(std::int64_t{1} << 40, std::nullopt)), 1000, 128);
  EXPECT_EQ(stats().module_loads, 2u);
  EXPECT_EQ(last_launch().function, launch.function);
}

// A constexpr tuple is kept in the cache entry (its elements copied, more than fill one block
// of a deque) and compared element by element: the same tuple hits, another element misses.
TEST_F(FakeDriverLaunch, ALongConstexprTupleIsKeptWhole) {
  const std::string source = std::string(TRITONRT_TEST_KERNELS) + "/tuple_kernels.py";
  auto& fn = JitFunction::get(source, "tuple_shape");
  const auto launch = [&](int last) {
    std::vector<Arg> elements;
    elements.push_back(make_arg(16));
    elements.push_back(make_arg(32));
    for (int i = 2; i < 48; ++i) elements.push_back(make_arg(i == 47 ? last : i));
    const Arg args[] = {make_arg(g_in), make_arg(g_out), make_arg(64), tuple_arg(elements)};
    fn.launch_packed(grid(1), args);
  };
  launch(7);
  launch(7);
  EXPECT_EQ(stats().module_loads, 1u) << "the same constexpr tuple: a hit";
  launch(8);
  EXPECT_EQ(stats().module_loads, 2u) << "its last element differs: another kernel";
  launch(7);
  launch(8);
  EXPECT_EQ(stats().module_loads, 2u);
  EXPECT_EQ(stats().launches, 5u);
}

TEST_F(FakeDriverLaunch, AnAutotunerKeyedOnATupleIsAnArgumentError) {
  const std::string source = std::string(TRITONRT_TEST_KERNELS) + "/tuple_kernels.py";
  auto& fn = JitFunction::get(source, "tuple_keyed");
  try {
    fn(grid(1), std::make_pair(g_in, g_in), g_out, 64);
    ADD_FAILURE() << "a tuple in the tuning key was accepted";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("parameter 'srcs' (#0): is a tuple, and its autotuner's key names it"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(stats().launches, 0u);
}

TEST_F(FakeDriverLaunch, ZeroGridLaunchesNothing) {
  auto& fn = JitFunction::get(kSource, "typed_args");
  fn(grid(0), g_out, g_in, 1000, 7, 0.5, scalar(DType::fp16, 1.5), 64);
  fn(grid(4, 0), g_out, g_in, 1000, 7, 0.5, scalar(DType::fp16, 1.5), 64);
  LaunchConfig computed;
  computed.grid_fn = [](const BoundArgs& args) { return Grid{cdiv(args.integer("n"), args.integer("BLOCK"))}; };
  fn(computed, g_out, g_in, 0, 7, 0.5, scalar(DType::fp16, 1.5), 64);
  EXPECT_EQ(stats().launches, 0u);
  fn(computed, g_out, g_in, 1000, 7, 0.5, scalar(DType::fp16, 1.5), 64);
  EXPECT_EQ(stats().launches, 1u);
  EXPECT_EQ(last_launch().grid[0], 16u);  // cdiv(1000, 64)
}

TEST_F(FakeDriverLaunch, KernelWithMoreThan48KiBOfSharedMemoryLaunches) {
  auto& fn = JitFunction::get(kSource, "big_shared");
  LaunchConfig config = grid(1);
  config.options.num_stages = 3;
  const DevicePtr a{g_a_data, DType::fp16};
  const DevicePtr b{g_b_data, DType::fp16};
  const auto artifact = fn.artifact_for(config, a, b, g_c, 256, 128, 128, 64);
  ASSERT_GT(artifact->metadata.shared, 48 * 1024);
  // The fake refuses this launch unless tritonrt raised the kernel's dynamic shared memory limit first.
  EXPECT_NO_THROW(fn(config, a, b, g_c, 256, 128, 128, 64));
  ASSERT_EQ(stats().launches, 1u);
  EXPECT_EQ(last_launch().shared_bytes, static_cast<unsigned>(artifact->metadata.shared));
}

TEST_F(FakeDriverLaunch, SecondCallIsACacheHit) {
  auto& fn = JitFunction::get(kSource, "typed_args");
  fn(grid(1), g_out, g_in, 1000, 7, 0.5, scalar(DType::fp16, 1.5), 32);
  EXPECT_EQ(stats().module_loads, 1u);
  const FakeCudaLaunch first = last_launch();
  // Other values, same specialization: the loaded kernel is reused.
  fn(grid(2), g_out + 4, g_in + 4, 999, 9, 0.25, scalar(DType::fp16, -2.0), 32);
  EXPECT_EQ(stats().module_loads, 1u);
  EXPECT_EQ(stats().launches, 2u);
  const FakeCudaLaunch second = last_launch();
  EXPECT_EQ(second.function, first.function);
  EXPECT_EQ(param<std::uint64_t>(second, 0), reinterpret_cast<std::uintptr_t>(g_out + 4));
  EXPECT_EQ(param<std::int32_t>(second, 2), 999);
  EXPECT_EQ(param<std::uint16_t>(second, 5), 0xc000u);  // -2.0 as fp16
}

// A call leaving parameters to their defaults launches the defaults' binary, also when the
// kernel launched last was another's (the quick check against it binds the defaults first).
TEST_F(FakeDriverLaunch, ACallLeavingDefaultsLaunchesTheDefaultsBinary) {
  auto& fn = JitFunction::get(std::string(TRITONRT_TEST_KERNELS) + "/frontend_kernels.py", "add_kernel");
  fn(grid(1), g_in, g_in, g_out, 100);  // BLOCK = 128, its default
  const FakeCudaLaunch defaults = last_launch();
  fn(grid(1), g_in, g_in, g_out, 99);
  EXPECT_EQ(last_launch().function, defaults.function);
  EXPECT_EQ(param<std::int32_t>(last_launch(), 3), 99);
  fn(grid(1), g_in, g_in, g_out, 100, 64);
  const FakeCudaLaunch block_64 = last_launch();
  EXPECT_NE(block_64.function, defaults.function);
  fn(grid(1), g_in, g_in, g_out, 98);  // after the BLOCK = 64 launch: the default's binary again
  EXPECT_EQ(last_launch().function, defaults.function);
  EXPECT_EQ(param<std::int32_t>(last_launch(), 3), 98);
  EXPECT_EQ(stats().module_loads, 2u);
  try {
    fn(grid(1), g_in, g_in, g_out, 100, 64, 1);
    ADD_FAILURE() << "a call of too many arguments launched";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("takes 5 arguments, 6 were given"), std::string::npos) << e.what();
  }
}

TEST_F(FakeDriverLaunch, KernelNeedingMoreThreadsThanTheDeviceAllowsIsAResourceError) {
  fake_.set_max_threads_per_block(64);
  auto& fn = JitFunction::get(kSource, "typed_args");
  LaunchConfig config = grid(1);
  config.options.num_warps = 4;  // 128 threads
  EXPECT_THROW(fn(config, g_out, g_in, 1000, 7, 0.5, scalar(DType::fp16, 1.5), 512), ResourceError);
  EXPECT_EQ(stats().launches, 0u);
  fake_.set_max_threads_per_block(0);
}

}  // namespace
}  // namespace tritonrt::test

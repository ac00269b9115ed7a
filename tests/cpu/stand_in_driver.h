// The stand-in driver's side of the tests of processes without Python (no_python.h).
#pragma once

#include <cstring>

#include "fake_cuda.h"
#include "no_python.h"

namespace tritonrt::test {

// The stand-in driver tritonrt loaded, or why a test must skip.
inline std::optional<std::string> no_fake_driver(FakeCudaApi& fake) {
  try {
    (void)Target::current();
  } catch (const DriverError& e) {
    return std::string("no CUDA driver could be loaded; put the fake's directory on LD_LIBRARY_PATH: ") + e.what();
  }
  if (!fake_cuda_api(&fake)) return "the libcuda.so.1 loaded is a real driver, not tritonrt's fake";
  fake.reset();
  return std::nullopt;
}

inline constexpr int kTunedN = 1 << 16;

// Launches library_style.py's autotuned add (a copy at `source`) once against the stand-in
// driver, timed so that the config launching the fewest programs is the fastest.
inline void launch_tuned_add(FakeCudaApi& fake, const fs::path& source) {
  alignas(16) static float x[kTunedN], y[kTunedN], out[kTunedN];  // stand-in device memory
  fake.set_kernel_duration_us(nullptr, 20000);                    // 20 ms a launch, 1 us a program
  fake.set_program_cost_us(1);
  auto& fn = JitFunction::get(source.string(), "entry_autotuned_add");
  LaunchConfig config;
  config.grid_fn = [](const BoundArgs& a) { return Grid{cdiv(a.integer("n"), a.integer("BLOCK"))}; };
  fn(config, static_cast<float*>(x), static_cast<float*>(y), static_cast<float*>(out), kTunedN);
}

// Checks that the launches since the stand-in was reset were one: the fastest config's (BLOCK
// 2048, the fewest programs), taken from a choice made before, nothing timed.
inline void expect_only_the_chosen_config_launched(FakeCudaApi& fake) {
  FakeCudaStats stats{};
  fake.get_stats(&stats);
  EXPECT_EQ(stats.launches, 1u);
  FakeCudaLaunch launch{};
  ASSERT_EQ(fake.last_launches(&launch, 1), 1u);
  EXPECT_EQ(launch.grid[0], static_cast<unsigned>(cdiv(kTunedN, 2048)));
}

// Launches library_style.py's entry_heuristic_scale (a copy at `source`, heuristics choosing
// BLOCK and EVEN) once against the stand-in driver; returns the grid it launched.
inline unsigned launch_heuristic_scale(FakeCudaApi& fake, const fs::path& source, long long n) {
  alignas(16) static float x[kTunedN], out[kTunedN];  // stand-in device memory
  auto& fn = JitFunction::get(source.string(), "entry_heuristic_scale");
  LaunchConfig config;
  config.grid_fn = [](const BoundArgs& a) { return Grid{cdiv(a.integer("n"), a.integer("BLOCK"))}; };
  fn(config, static_cast<float*>(x), static_cast<float*>(out), n, 2.0f);
  FakeCudaLaunch launch{};
  return fake.last_launches(&launch, 1) == 1 ? launch.grid[0] : 0;
}

// Launches descriptor_kernels.py's matmul_tma_layouts (a copy at `source`) once against the
// stand-in driver, with its first config chosen (64x64x32 tiles, which its pre_hook sets from
// that and A's layout); returns the tile of A's tensor map as "rows x columns".
inline std::string launch_layout_matmul(FakeCudaApi& fake, const fs::path& source, bool a_row_major) {
  alignas(16) static std::uint16_t a_data[128 * 256], b_data[256 * 128], c_data[128 * 128];  // stand-in memory
  const std::int64_t placeholder[] = {1, 1}, k_rows[] = {256, 128}, mk[] = {128, 256}, mn[] = {128, 128};
  const std::int64_t k_rows_strides[] = {128, 1}, mk_strides[] = {256, 1};
  const auto a = a_row_major ? TensorDescriptor::make(a_data, DType::fp16, mk, mk_strides, placeholder)
                             : TensorDescriptor::make(a_data, DType::fp16, k_rows, k_rows_strides, placeholder);
  const auto b = TensorDescriptor::make(b_data, DType::fp16, k_rows, k_rows_strides, placeholder);
  const auto c = TensorDescriptor::make(c_data, DType::fp16, mn, k_rows_strides, placeholder);
  LaunchConfig config;
  config.grid = Grid{2, 2};
  config.autotune_config = 0;
  JitFunction::get(source.string(), "matmul_tma_layouts")(config, a, b, c, 256, a_row_major);
  FakeCudaLaunch launch{};
  if (fake.last_launches(&launch, 1) != 1) return "no launch";
  FakeCudaTensorMap map;
  std::memcpy(&map, fake_cuda_param(&launch, 0), sizeof map);
  return std::to_string(map.box[1]) + "x" + std::to_string(map.box[0]);
}

}  // namespace tritonrt::test

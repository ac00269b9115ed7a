// Host time per call of a decorated kernel on a cache hit: bench/kernels.py's `scale` launched
// with its constexprs passed, autotuned (`tuned_scale`, its tuning done) and with its block
// from a heuristic (`heuristic_scale`), through tritonrt and through Triton's Python; on
// Hopper and newer also `tiled_desc2`, its descriptors' tiles passed or set by a config's
// pre_hook (Python's, memoized, or a C++ one), through tritonrt.
//
//     tritonrt_bench_decorated [results.json]   (default: bench/results/decorated.json)
//
// The autotuned and heuristic launches run the very kernel the explicit launch runs (same
// config), so the difference is what resolving the decorators costs.

#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_python.h"
#include "tritonrt/tritonrt.h"

namespace {

namespace py = pybind11;
using namespace tritonrt::bench;

constexpr int kN = 4096;  // four programs: the GPU keeps up with the launches being timed

// Host microseconds per call of each of `calls` (its row's name, the call): they take turns,
// repetition by repetition, the stream drained before each.
std::vector<std::pair<std::string, Stats>> timed_rows(
    CUstream stream, const std::vector<std::pair<std::string, std::function<void()>>>& calls) {
  std::vector<std::vector<double>> samples(calls.size());
  for (int rep = 0; rep < kWarmupReps + kReps; ++rep) {
    for (std::size_t which = 0; which < calls.size(); ++which) {
      CHECK_CU(cuStreamSynchronize(stream));
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < kPerRep; ++i) calls[which].second();
      const auto stop = std::chrono::steady_clock::now();
      if (rep >= kWarmupReps)
        samples[which].push_back(std::chrono::duration<double, std::micro>(stop - start).count() / kPerRep);
    }
  }
  CHECK_CU(cuStreamSynchronize(stream));
  std::vector<std::pair<std::string, Stats>> rows;
  for (std::size_t which = 0; which < calls.size(); ++which)
    rows.emplace_back(calls[which].first, summarize(samples[which]));
  return rows;
}

// Host time per call of bench/kernels.py's tiled_desc2 (two 16 x 16 fp16 TMA descriptors over
// `memory`): its tiles passed, set by its config's Python pre_hook (memoized), and set by a
// C++ config hook; the same kernel each time.
std::vector<std::pair<std::string, Stats>> descriptor_rows(CUdeviceptr memory, CUstream stream) {
  const std::int64_t shape[] = {16, 16}, strides[] = {16, 1}, placeholder[] = {1, 1};
  const auto* base = reinterpret_cast<const void*>(memory);
  const auto tiled = tritonrt::TensorDescriptor::make(base, tritonrt::DType::fp16, shape, strides, shape);
  const auto untiled = tritonrt::TensorDescriptor::make(base, tritonrt::DType::fp16, shape, strides, placeholder);
  auto& plain = tritonrt::JitFunction::get(kKernels, "tiled_desc2");
  auto& hooked = tritonrt::JitFunction::get(kKernels, "hooked_desc2");
  auto& cpp_hooked = tritonrt::JitFunction::get(kKernels, "cpp_hooked_desc2");
  cpp_hooked.set_config_hook([](const tritonrt::BoundArgs& a, tritonrt::BlockShapes& tiles) {
    tiles.set("in_desc", {a.integer("BLOCK_M"), a.integer("BLOCK_N")});
    tiles.set("out_desc", {a.integer("BLOCK_M"), a.integer("BLOCK_N")});
  });
  const tritonrt::LaunchConfig config{.grid = tritonrt::Grid{1}, .stream = stream};
  std::printf("measuring descriptor kernels: %d repetitions of %d calls each...\n", kReps, kPerRep);
  return timed_rows(stream,
                    {{"tritonrt, descriptors, tiles passed", [&] { plain(config, tiled, tiled, 0, 16, 16); }},
                     {"tritonrt, descriptors, Python pre_hook", [&] { hooked(config, untiled, untiled, 0); }},
                     {"tritonrt, descriptors, C++ config hook", [&] { cpp_hooked(config, untiled, untiled, 0); }}});
}

int run(const std::string& output) {
  auto& d = Driver::get();
  int devices = 0;
  CHECK_CU(cuDeviceGetCount(&devices));
  if (devices == 0) {
    std::printf("no GPU: the CUDA driver reports no device; nothing to measure\n");
    return 0;
  }
  CUdevice device = 0;
  CUcontext ctx = nullptr;
  CHECK_CU(cuDeviceGet(&device, 0));
  CHECK_CU(cuDevicePrimaryCtxRetain(&ctx, device));
  CHECK_CU(cuCtxSetCurrent(ctx));
  CUstream stream = nullptr;
  CHECK_CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUdeviceptr x = 0, out = 0;
  CHECK_CU(cuMemAlloc(&x, 4 * kN));
  CHECK_CU(cuMemAlloc(&out, 4 * kN));
  CHECK_CU(cuMemsetD8(x, 0, 4 * kN));
  const tritonrt::DevicePtr xp{reinterpret_cast<const void*>(x), tritonrt::DType::fp32, 4 * kN};
  const tritonrt::DevicePtr outp{reinterpret_cast<const void*>(out), tritonrt::DType::fp32, 4 * kN};

  auto& scale = tritonrt::JitFunction::get(kKernels, "scale");
  auto& tuned = tritonrt::JitFunction::get(kKernels, "tuned_scale");
  auto& heuristic = tritonrt::JitFunction::get(kKernels, "heuristic_scale");
  const tritonrt::LaunchConfig config{
      .grid_fn = [](const tritonrt::BoundArgs& a) { return tritonrt::Grid{tritonrt::cdiv(kN, a.integer("BLOCK"))}; },
      .stream = stream};
  tuned(config, xp, outp, kN, 2.0f);  // tunes: every later call is a hit
  const int stages = tuned.artifact_for(config, xp, outp, kN, 2.0f)->metadata.num_stages;
  tritonrt::LaunchConfig explicit_config = config;
  explicit_config.options = {.num_warps = 4, .num_stages = stages};
  scale(explicit_config, xp, outp, kN, 2.0f, 1024);
  heuristic(config, xp, outp, kN, 2.0f);
  CHECK_CU(cuStreamSynchronize(stream));

  std::printf("measuring C++ calls: %d repetitions of %d calls each...\n", kReps, kPerRep);
  auto rows =
      timed_rows(stream, {{"tritonrt, constexprs passed", [&] { scale(explicit_config, xp, outp, kN, 2.0f, 1024); }},
                          {"tritonrt, @triton.autotune (hit)", [&] { tuned(config, xp, outp, kN, 2.0f); }},
                          {"tritonrt, @triton.heuristics (hit)", [&] { heuristic(config, xp, outp, kN, 2.0f); }}});
  if (d.compute_capability(device).first >= 9) {
    for (auto& row : descriptor_rows(x, stream)) rows.push_back(std::move(row));
  } else {
    std::printf("descriptor rows not measured: TMA descriptors need compute capability 9.0\n");
  }
  nlohmann::json info = {
      {"device", device_name(device)},   {"driver_version", driver_version()},
      {"timestamp", utc_timestamp()},    {"repetitions", kReps},
      {"calls_per_repetition", kPerRep}, {"statistic", "median over repetitions of host microseconds per call"}};
  {
    std::printf("measuring Triton's Python calls...\n");
    const tritonrt::test::ReferenceGil gil;  // Python is not started when the index served every kernel
    try {
      py::dict side = triton_side();
      py::object module = py::module_::import("_tritonrt_bridge").attr("import_source")(kKernels);
      const auto times =
          side["measure_decorated"](module, reinterpret_cast<std::uintptr_t>(stream), kN, stages, kReps, kPerRep)
              .cast<std::map<std::string, std::vector<double>>>();
      rows.push_back({"Triton, constexprs passed", summarize(times.at("explicit"))});
      rows.push_back({"Triton, @triton.autotune", summarize(times.at("autotuned"))});
      rows.push_back({"Triton, @triton.heuristics", summarize(times.at("heuristics"))});
    } catch (py::error_already_set& e) {
      info["python_error"] = std::string(e.what());
      std::printf("Triton's Python calls were not measured: %s\n", e.what());
    }
  }
  // Each row against the same kernel launched by tritonrt with its values passed: `scale`'s
  // constexprs, or tiled_desc2's tiles.
  const auto base = [&](const std::string& name) {
    const bool descriptors = name.find("descriptors") != std::string::npos;
    for (const auto& [row, s] : rows) {
      if (row == (descriptors ? "tritonrt, descriptors, tiles passed" : "tritonrt, constexprs passed")) return s.median;
    }
    return rows[0].second.median;
  };
  std::printf("\nhost time per call on %s (cache hit; median of %d x %d calls)\n\n", device_name(device).c_str(), kReps,
              kPerRep);
  std::printf("%-38s %12s %10s %10s %22s\n", "call", "median us", "p10 us", "p90 us", "x tritonrt, values passed");
  nlohmann::json results = nlohmann::json::array();
  for (const auto& [name, s] : rows) {
    const double ratio = s.median / base(name);
    std::printf("%-38s %12.3f %10.3f %10.3f %22.3f\n", name.c_str(), s.median, s.p10, s.p90, ratio);
    results.push_back({{"call", name},
                       {"median_us", s.median},
                       {"p10_us", s.p10},
                       {"p90_us", s.p90},
                       {"ratio_to_values_passed", ratio}});
  }
  info["results"] = results;
  write_results(info, output);
  (void)d.cuMemFree(x);
  (void)d.cuMemFree(out);
  (void)d.cuStreamDestroy(stream);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return tritonrt::bench::bench_main(argc, argv, "decorated.json", run); }

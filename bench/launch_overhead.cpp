// Host time per kernel launch (cache hit), in one process: a bare cuLaunchKernel of the same
// cubin, tritonrt's `fn(config, args...)`, Triton's Python `kernel[grid](...)` and Triton's
// `CompiledKernel.run(...)`, for kernels with 3, 8 and 19 runtime parameters, and one taking
// two TMA tensor descriptors (whose CUtensorMaps the bare launch encodes once, and tritonrt
// finds again in its thread's recent maps on every launch).
//
//     tritonrt_bench_launch [results.json]     (default: bench/results/launch_overhead.json)
//
// Each figure is the median over repetitions of back-to-back launches on one stream, the
// device synchronized between repetitions outside the timed region.

#include <dlfcn.h>
#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "bare_launch.h"
#include "bench_python.h"
#include "launch/launcher.h"
#include "tritonrt/tritonrt.h"

namespace {

namespace py = pybind11;
using namespace tritonrt::bench;

struct Row {
  std::string method;
  std::string kernel;
  int args;
  Stats stats;
};

// Measures the bare and tritonrt launches of kernel `name`, interleaved repetition by
// repetition so drift affects both alike.
template <class... Args>
void measure_cpp(const char* name, int arg_count, CUstream stream, std::vector<Row>& rows, const Args&... args) {
  static_assert(sizeof...(Args) > 0);
  auto& fn = tritonrt::JitFunction::get(kKernels, name);
  const tritonrt::LaunchConfig config{.grid = {1, 1, 1}, .stream = stream};
  fn(config, args...);  // compile and load: every timed launch is a cache hit
  const auto artifact = fn.artifact_for(config, args...);
  BareLaunch bare(*artifact, stream, config.grid, args...);
  bare();
  CHECK_CU(cuStreamSynchronize(stream));

  // Diagnostic third: tritonrt's host work without the launch (specialize, pack, look up).
  std::vector<double> samples[3];
  for (int rep = 0; rep < kWarmupReps + kReps; ++rep) {
    for (int which = 0; which < 3; ++which) {
      CHECK_CU(cuStreamSynchronize(stream));
      const auto start = std::chrono::steady_clock::now();
      if (which == 0) {
        for (int i = 0; i < kPerRep; ++i) bare();
      } else if (which == 1) {
        for (int i = 0; i < kPerRep; ++i) fn(config, args...);
      } else {
        for (int i = 0; i < kPerRep; ++i) (void)fn.artifact_for(config, args...);
      }
      const auto stop = std::chrono::steady_clock::now();
      if (rep >= kWarmupReps) {
        samples[which].push_back(std::chrono::duration<double, std::micro>(stop - start).count() / kPerRep);
      }
    }
  }
  CHECK_CU(cuStreamSynchronize(stream));
  rows.push_back({"cuLaunchKernel (bare)", name, arg_count, summarize(samples[0])});
  rows.push_back({"tritonrt fn(config, args...)", name, arg_count, summarize(samples[1])});
  rows.push_back({"  of which lookup (artifact_for)", name, arg_count, summarize(samples[2])});
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
  std::vector<CUdeviceptr> buffers(6);
  for (auto& b : buffers) {
    CHECK_CU(cuMemAlloc(&b, 512));  // a 16 x 16 fp16 matrix for the descriptors
    CHECK_CU(cuMemsetD8(b, 0, 512));
  }
  CHECK_CU(cuCtxSynchronize());
  auto p = [&](int i) { return reinterpret_cast<float*>(buffers[i]); };

  // The same values the Python side passes (bench/triton_launch.py): flag 0, no integer equal
  // to 1 or divisible by 16, so every argument is a runtime parameter in both.
  std::vector<Row> rows;
  std::printf("measuring C++ launches: %d repetitions of %d launches each...\n", kReps, kPerRep);
  measure_cpp("args3", 3, stream, rows, p(0), 3, 0);
  measure_cpp("args8", 8, stream, rows, p(0), p(1), p(2), 3, 5, 7, 0.5f, 0);
  measure_cpp("args19", 19, stream, rows, p(0), p(1), p(2), p(3), p(4), p(5), 3, 5, 7, 9, 11, 13, 15, 17, 0.5f, 1.5f,
              2.5f, 3.5f, 0);
  // Two descriptors of 16 x 16 fp16 matrices, loaded whole (the Python side passes the same).
  const std::int64_t shape[] = {16, 16}, strides[] = {16, 1}, block[] = {16, 16};
  const auto d0 = tritonrt::TensorDescriptor::make(p(0), tritonrt::DType::fp16, shape, strides, block);
  const auto d1 = tritonrt::TensorDescriptor::make(p(1), tritonrt::DType::fp16, shape, strides, block);
  if (d.compute_capability(device).first >= 9) {
    measure_cpp("desc2", 3, stream, rows, d0, d1, 0);
  } else {
    std::printf("desc2 not measured: TMA descriptors need compute capability 9.0\n");
  }

  // Diagnostic: the driver query each tritonrt launch makes to find the stream's context.
  std::vector<double> query_samples;
  for (int rep = 0; rep < kWarmupReps + kReps; ++rep) {
    CUcontext found = nullptr;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kPerRep; ++i) CHECK_CU(cuStreamGetCtx(stream, &found));
    const auto stop = std::chrono::steady_clock::now();
    if (rep >= kWarmupReps)
      query_samples.push_back(std::chrono::duration<double, std::micro>(stop - start).count() / kPerRep);
  }
  const Stats query = summarize(query_samples);

  nlohmann::json info = {{"device", device_name(device)},
                         {"cuStreamGetCtx_median_us", query.median},
                         {"driver_version", driver_version()},
                         {"timestamp", utc_timestamp()},
                         {"repetitions", kReps},
                         {"launches_per_repetition", kPerRep},
                         {"statistic", "median over repetitions of host microseconds per launch"}};
  std::string python_note;
  {
    std::printf("measuring Triton's Python launches...\n");
    const tritonrt::test::ReferenceGil gil;  // Python is not started when the index served every kernel
    try {
      py::dict scope = triton_side();
      const auto versions = scope["versions"]().cast<std::map<std::string, std::string>>();
      info["triton_version"] = versions.at("triton");
      info["torch_version"] = versions.at("torch");
      // The module object tritonrt imported: both sides launch the same JITFunctions.
      py::object module = py::module_::import("_tritonrt_bridge").attr("import_source")(kKernels);
      const auto handle = reinterpret_cast<std::uintptr_t>(stream);
      for (const auto& [name, count] : {std::pair{"args3", 3}, std::pair{"args8", 8}, std::pair{"args19", 19},
                                        std::pair{"desc2", 3}}) {
        if (std::none_of(rows.begin(), rows.end(), [&](const Row& r) { return r.kernel == name; })) continue;
        py::dict r = scope["measure"](module, name, handle, kReps, kPerRep);
        rows.push_back({"Triton kernel[grid](...)", name, count, summarize(r["jit"].cast<std::vector<double>>())});
        rows.push_back(
            {"Triton CompiledKernel.run", name, count, summarize(r["compiled_run"].cast<std::vector<double>>())});
      }
    } catch (py::error_already_set& e) {
      python_note = std::string("Triton's Python launches were not measured: ") + e.what();
      info["python_error"] = python_note;
    }
  }

  // Grouped by kernel, in the order they were measured.
  std::vector<std::string> kernels;
  for (const auto& r : rows) {
    if (std::find(kernels.begin(), kernels.end(), r.kernel) == kernels.end()) kernels.push_back(r.kernel);
  }
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    return std::find(kernels.begin(), kernels.end(), a.kernel) < std::find(kernels.begin(), kernels.end(), b.kernel);
  });
  auto bare_median = [&](const std::string& kernel) {
    for (const auto& r : rows) {
      if (r.kernel == kernel && r.method == "cuLaunchKernel (bare)") return r.stats.median;
    }
    return 0.0;
  };
  std::printf("\nhost time per launch on %s (cache hit; median of %d x %d launches)\n\n", device_name(device).c_str(),
              kReps, kPerRep);
  std::printf("%-32s %-7s %5s %12s %10s %10s %14s\n", "method", "kernel", "args", "median us", "p10 us", "p90 us",
              "x bare launch");
  nlohmann::json results = nlohmann::json::array();
  for (const auto& r : rows) {
    const double ratio = r.stats.median / bare_median(r.kernel);
    std::printf("%-32s %-7s %5d %12.3f %10.3f %10.3f %14.3f\n", r.method.c_str(), r.kernel.c_str(), r.args,
                r.stats.median, r.stats.p10, r.stats.p90, ratio);
    results.push_back({{"method", r.method},
                       {"kernel", r.kernel},
                       {"args", r.args},
                       {"median_us", r.stats.median},
                       {"p10_us", r.stats.p10},
                       {"p90_us", r.stats.p90},
                       {"ratio_to_bare_cuLaunchKernel", ratio}});
  }
  std::printf("\ndiagnostic: cuStreamGetCtx alone (part of every tritonrt launch): %.3f us median\n", query.median);
  if (!python_note.empty()) std::printf("\n%s\n", python_note.c_str());
  info["results"] = results;

  write_results(info, output);

  for (auto b : buffers) (void)d.cuMemFree(b);
  (void)d.cuStreamDestroy(stream);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return tritonrt::bench::bench_main(argc, argv, "launch_overhead.json", run); }

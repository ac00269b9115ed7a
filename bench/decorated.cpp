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
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bare_launch.h"
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
// `memory`): launched bare (its maps encoded once), its tiles passed, set by its config's
// Python pre_hook (memoized), and set by a C++ config hook; the same kernel each time.
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
  BareLaunch bare(*plain.artifact_for(config, tiled, tiled, 0, 16, 16), stream, config.grid, tiled, tiled, 0, 16, 16);
  std::printf("measuring descriptor kernels: %d repetitions of %d calls each...\n", kReps, kPerRep);
  return timed_rows(stream,
                    {{"descriptors, cuLaunchKernel (bare)", [&] { bare(); }},
                     {"tritonrt, descriptors, tiles passed", [&] { plain(config, tiled, tiled, 0, 16, 16); }},
                     {"tritonrt, descriptors, Python pre_hook", [&] { hooked(config, untiled, untiled, 0); }},
                     {"tritonrt, descriptors, C++ config hook", [&] { cpp_hooked(config, untiled, untiled, 0); }}});
}

// FlagGems' Hopper matmul as the library ships it (flag_gems 5.x, runtime/backend/_nvidia/
// hopper/ops/mm.py): mm_kernel_general_host_tma (libentry over libtuner over triton.jit; its
// general_mm passes host descriptors of block shape [1, 1], which each config's pre_hook sets
// to the config's tiles), called as general_mm calls it, with M = N = K = kMm fp16 row-major;
// beside it a bare cuLaunchKernel of the chosen binary with the same parameters (its maps
// encoded once), the same calls with a C++ config hook in place of FlagGems' Python one, and
// the library's device-descriptor kernel (mm_kernel_general, no hook). Each group of rows
// takes turns; the first call of each kernel (its tuning) is timed once.
constexpr std::int64_t kMm = 256;

std::vector<std::pair<std::string, Stats>> library_rows(CUstream stream, nlohmann::json& info) {
  const char* module = "flag_gems.runtime.backend._nvidia.hopper.ops.mm";
  setenv("GEMS_VENDOR", "nvidia", 0);
  setenv("FLAGGEMS_DB_URL", "sqlite:///:memory:", 0);  // libtuner's own store: none left behind
  auto& host = tritonrt::JitFunction::get(module, "mm_kernel_general_host_tma");
  auto& device = tritonrt::JitFunction::get(module, "mm_kernel_general");
  const std::size_t bytes = kMm * kMm * 2;
  CUdeviceptr memory[3];
  for (auto& m : memory) {
    CHECK_CU(cuMemAlloc(&m, bytes));
    CHECK_CU(cuMemsetD8(m, 0x3c, bytes));
  }
  auto ptr = [&](int i) { return tritonrt::DevicePtr{reinterpret_cast<const void*>(memory[i]), tritonrt::DType::fp16, bytes}; };
  const std::int64_t shape[] = {kMm, kMm}, strides[] = {kMm, 1}, placeholder[] = {1, 1};
  auto desc = [&](int i) {
    return tritonrt::TensorDescriptor::make(reinterpret_cast<const void*>(memory[i]), tritonrt::DType::fp16, shape,
                                            strides, placeholder);
  };
  const auto a_desc = desc(0), b_desc = desc(1), c_desc = desc(2);
  const tritonrt::LaunchConfig config{
      .grid_fn =
          [](const tritonrt::BoundArgs& a) {
            return tritonrt::Grid{tritonrt::cdiv(kMm, a.integer("BLOCK_M")) * tritonrt::cdiv(kMm, a.integer("BLOCK_N"))};
          },
      .stream = stream};
  const std::int64_t n = kMm;
  // As general_mm: strides of A, B and C, then GROUP_M=8, A_ROW_MAJOR, B_ROW_MAJOR, dtype.
  auto host_call = [&] { host(config, a_desc, b_desc, c_desc, n, n, n, n, 1, n, 1, n, 1, 8, true, true, "float16"); };
  auto device_call = [&] { device(config, ptr(0), ptr(1), ptr(2), n, n, n, n, 1, n, 1, n, 1, 8); };
  for (const auto& [name, call] : {std::pair<const char*, std::function<void()>>{"mm_kernel_general_host_tma", host_call},
                                   {"mm_kernel_general", device_call}}) {
    const auto start = std::chrono::steady_clock::now();
    call();
    CHECK_CU(cuStreamSynchronize(stream));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("FlagGems %s: first call (tuning) %.1f s\n", name, seconds);
    info["first_call_s"][name] = seconds;
  }
  // The chosen binary, launched bare: its descriptors' maps encoded with the tiles it was
  // compiled for (the config's), its grid from C's tile.
  const auto chosen = host.artifact_for(config, a_desc, b_desc, c_desc, n, n, n, n, 1, n, 1, n, 1, 8, true, true,
                                        "float16");
  const auto& c_tile = chosen->metadata.tensordesc_meta.at(2).block_size;
  const tritonrt::Grid grid{tritonrt::cdiv(kMm, c_tile.at(0)) * tritonrt::cdiv(kMm, c_tile.at(1))};
  BareLaunch bare(*chosen, stream, grid, a_desc, b_desc, c_desc, n, n, n, n, 1, n, 1, n, 1, 0, 0, 0, 8, true, true,
                  "float16", true);
  std::printf("measuring FlagGems' Hopper matmul: %d repetitions of %d calls each...\n", kReps, kPerRep);
  auto rows = timed_rows(stream, {{"FlagGems mm host TMA, cuLaunchKernel (bare)", [&] { bare(); }},
                                  {"FlagGems mm host TMA, tritonrt, its pre_hook", host_call},
                                  {"FlagGems mm device TMA, tritonrt", device_call}});
  // The same calls with FlagGems' hook written in C++. Swapped in after the Python hook's
  // rows, in this one thread, with the tuning's choice kept (the API asks for a config hook
  // before the first launch; the benchmark only times hits of the chosen config).
  host.set_config_hook([](const tritonrt::BoundArgs& a, tritonrt::BlockShapes& tiles) {
    const std::int64_t m = a.integer("BLOCK_M"), bn = a.integer("BLOCK_N"), k = a.integer("BLOCK_K");
    const bool a_rows = a["A_ROW_MAJOR"].value.u != 0, b_rows = a["B_ROW_MAJOR"].value.u != 0;
    tiles.set("a_desc", a_rows ? std::initializer_list<std::int64_t>{m, k} : std::initializer_list<std::int64_t>{k, m});
    tiles.set("b_desc",
              b_rows ? std::initializer_list<std::int64_t>{k, bn} : std::initializer_list<std::int64_t>{bn, k});
    tiles.set("c_desc", {m, bn});
  });
  // FlagGems' Python hook back in place however the rows end (a failed launch throws).
  struct PythonHookBack {
    tritonrt::JitFunction& fn;
    ~PythonHookBack() { fn.set_config_hook({}); }
  } python_hook_back{host};
  for (auto& row : timed_rows(stream, {{"FlagGems mm host TMA, cuLaunchKernel (bare), again", [&] { bare(); }},
                                       {"FlagGems mm host TMA, tritonrt, a C++ config hook", host_call}})) {
    rows.push_back(std::move(row));
  }
  for (auto m : memory) CHECK_CU(cuMemFree(m));
  return rows;
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
  // The heuristics kernel called with 256 sizes in turn (n = 4096, 4080, ..., 16: its heuristic
  // read each once, before the timing), as a model's kernels see many shapes.
  std::vector<std::int64_t> sizes;
  for (std::int64_t n = kN; n > 0; n -= 16) sizes.push_back(n);
  for (const std::int64_t n : sizes) heuristic(config, xp, outp, n, 2.0f);
  std::size_t turn = 0;
  CHECK_CU(cuStreamSynchronize(stream));

  std::printf("measuring C++ calls: %d repetitions of %d calls each...\n", kReps, kPerRep);
  auto rows =
      timed_rows(stream, {{"tritonrt, constexprs passed", [&] { scale(explicit_config, xp, outp, kN, 2.0f, 1024); }},
                          {"tritonrt, @triton.autotune (hit)", [&] { tuned(config, xp, outp, kN, 2.0f); }},
                          {"tritonrt, @triton.heuristics (hit)", [&] { heuristic(config, xp, outp, kN, 2.0f); }},
                          {"tritonrt, @triton.heuristics (hit), 256 sizes in turn",
                           [&] { heuristic(config, xp, outp, sizes[turn++ % sizes.size()], 2.0f); }}});
  nlohmann::json info = {
      {"device", device_name(device)},   {"driver_version", driver_version()},
      {"timestamp", utc_timestamp()},    {"repetitions", kReps},
      {"calls_per_repetition", kPerRep}, {"statistic", "median over repetitions of host microseconds per call"}};
  if (d.compute_capability(device).first >= 9) {
    for (auto& row : descriptor_rows(x, stream)) rows.push_back(std::move(row));
    try {
      for (auto& row : library_rows(stream, info)) rows.push_back(std::move(row));
    } catch (const std::exception& e) {  // FlagGems not installed, say: the other rows stand
      info["flaggems_error"] = e.what();
      std::printf("FlagGems' Hopper matmul was not measured: %s\n", e.what());
    }
  } else {
    std::printf("descriptor rows not measured: TMA descriptors need compute capability 9.0\n");
  }
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
  // Each row against the same kernel launched by tritonrt with its values passed (`scale`'s
  // constexprs, tiled_desc2's tiles) and against a bare cuLaunchKernel of the same binary with
  // the same parameters, where the benchmark has one: the first row of its group that names it.
  const auto median_of = [&](std::string_view wanted) -> std::optional<double> {
    for (const auto& [row, s] : rows) {
      if (row == wanted) return s.median;
    }
    return std::nullopt;
  };
  const auto bases = [&](const std::string& name) -> std::pair<std::optional<double>, std::optional<double>> {
    if (name.starts_with("FlagGems mm host TMA")) {
      const bool again = name.find("C++ config hook") != std::string::npos || name.ends_with("again");
      return {std::nullopt, median_of(again ? "FlagGems mm host TMA, cuLaunchKernel (bare), again"
                                            : "FlagGems mm host TMA, cuLaunchKernel (bare)")};
    }
    if (name.starts_with("FlagGems")) return {std::nullopt, std::nullopt};
    if (name.find("descriptors") != std::string::npos) {
      return {median_of("tritonrt, descriptors, tiles passed"), median_of("descriptors, cuLaunchKernel (bare)")};
    }
    return {median_of("tritonrt, constexprs passed"), std::nullopt};
  };
  std::printf("\nhost time per call on %s (cache hit; median of %d x %d calls)\n\n", device_name(device).c_str(), kReps,
              kPerRep);
  std::printf("%-50s %10s %9s %9s %16s %8s\n", "call", "median us", "p10 us", "p90 us", "x values passed", "x bare");
  nlohmann::json results = nlohmann::json::array();
  const auto shown = [](std::optional<double> r) {
    char text[32] = "-";
    if (r) std::snprintf(text, sizeof text, "%.3f", *r);
    return std::string(text);
  };
  for (const auto& [name, s] : rows) {
    const auto [passed, bare] = bases(name);
    const std::optional<double> to_passed = passed ? std::optional(s.median / *passed) : std::nullopt;
    const std::optional<double> to_bare = bare ? std::optional(s.median / *bare) : std::nullopt;
    std::printf("%-50s %10.3f %9.3f %9.3f %16s %8s\n", name.c_str(), s.median, s.p10, s.p90, shown(to_passed).c_str(),
                shown(to_bare).c_str());
    nlohmann::json row{{"call", name}, {"median_us", s.median}, {"p10_us", s.p10}, {"p90_us", s.p90}};
    if (to_passed) row["ratio_to_values_passed"] = *to_passed;
    if (to_bare) row["ratio_to_bare_cuLaunchKernel"] = *to_bare;
    results.push_back(row);
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

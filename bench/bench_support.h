// What the benchmark programs that drive libcuda themselves share: statistics over samples, the
// device's name, a timestamp, writing the results and the program's main. Nothing here needs
// Python (bench_python.h has the Python side).
#pragma once

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <cstdio>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "test_driver.h"
#include "tritonrt/error.h"

namespace tritonrt::bench {

using Driver = test::TestDriver;
#define CHECK_CU(call) TRITONRT_CU_CHECK(Driver::get(), call, "benchmark")

constexpr int kReps = 200;      // repetitions; the median of their per-launch times is reported
constexpr int kPerRep = 500;    // back-to-back launches per repetition (well below the queue depth)
constexpr int kWarmupReps = 3;  // untimed repetitions first
inline const std::string kBenchDir = TRITONRT_BENCH_DIR;
inline const std::string kKernels = kBenchDir + "/kernels.py";

struct Stats {
  double median = 0, p10 = 0, p90 = 0;
};

inline Stats summarize(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  auto at = [&](double q) { return samples[static_cast<std::size_t>(q * (samples.size() - 1) + 0.5)]; };
  const std::size_t n = samples.size();
  const double median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  return {median, at(0.1), at(0.9)};
}

// Name and version of the device and driver, read from libcuda directly (not in tritonrt's table).
inline std::string device_name(CUdevice device) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  using GetName = CUresult (*)(char*, int, CUdevice);
  auto get_name = lib ? reinterpret_cast<GetName>(dlsym(lib, "cuDeviceGetName")) : nullptr;
  char name[256] = "unknown";
  if (get_name == nullptr || get_name(name, sizeof name, device) != CUDA_SUCCESS) std::strcpy(name, "unknown");
  return name;
}
inline int driver_version() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  using GetVersion = CUresult (*)(int*);
  auto get_version = lib ? reinterpret_cast<GetVersion>(dlsym(lib, "cuDriverGetVersion")) : nullptr;
  int version = 0;
  if (get_version != nullptr) (void)get_version(&version);
  return version;
}

inline std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

// Writes a benchmark's results to `path` (its folder made first) and says where.
inline void write_results(const nlohmann::json& results, const std::filesystem::path& path) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << results.dump(2) << "\n";
  std::printf("\nresults written to %s\n", path.c_str());
}

// A benchmark's main: `run(path)` with the results' path (argv[1], else
// bench/results/<default_name>). Without a GPU there is nothing to measure: it says so, exit 0.
template <class Run>
int bench_main(int argc, char** argv, const char* default_name, Run run) {
  const std::string output = argc > 1 ? argv[1] : kBenchDir + "/results/" + default_name;
  try {
    (void)Driver::get();
  } catch (const tritonrt::DriverError& e) {
    std::printf("no GPU here, nothing to measure: %s\n", e.what());
    return 0;
  }
  try {
    return run(output);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "benchmark failed: %s\n", e.what());
    return 1;
  }
}

}  // namespace tritonrt::bench

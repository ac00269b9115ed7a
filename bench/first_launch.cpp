// The first launch in a fresh process: time from main() to the first kernel's completion,
// split into CUDA context creation, JitFunction::get and the first launch (enqueue and run),
// for a kernel served by
//   (a) tritonrt's index           no Python may be loaded (TRITONRT_LIBPYTHON points nowhere)
//   (b) a bundle                   the same, the kernel got by a path that does not exist
//   (e) an embedded bundle         the same, the bundle compiled into this program at build
//                                  time (tritonrt_add_kernels); the other rows turn it off
//   (c) Triton's cache via Python  the index off, the compile a Triton cache hit (and its steps
//                                  timed by TRITONRT_LOG=info, in one more process)
//   (d) Triton's own kernel[grid]  a fresh Python interpreter (bench/first_launch.py)
// and the time to load a bundle of 1,000 kernels. Every sample is a new process: this program
// run again with --child MODE (or Python for (d)); the table shows medians.
//
//   tritonrt_bench_first_launch [results.json]
// This program links no libpython; (c) loads one the way any tritonrt program does.

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_support.h"
#include "store/files.h"
#include "store/index.h"
#include "store/index_inputs.h"
#include "tritonrt/bundle.h"
#include "tritonrt/tritonrt.h"

namespace tritonrt::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kSamples = 7;         // fresh processes per mode
constexpr int kManyKernels = 1000;  // kernels in the large bundle
constexpr long long kN = 1 << 20;   // elements the kernel scales
constexpr int kBlock = 1024;
const Clock::time_point kStart = Clock::now();  // as main() is entered (static initialization)

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// Runs `command`, returns its stdout's last line parsed as JSON (null when it printed
// nothing), and the wall time around it; `output`, when given, gets all it printed.
nlohmann::json run_child(const std::string& command, double& wall_ms, std::string* output = nullptr) {
  const auto start = Clock::now();
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  std::string out, last;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  const int status = pclose(pipe);
  wall_ms = ms_since(start);
  if (status != 0) throw std::runtime_error("'" + command + "' failed:\n" + out);
  if (output != nullptr) *output = out;
  const auto end = out.find_last_not_of('\n');
  if (end == std::string::npos) return nullptr;
  const auto begin = out.rfind('\n', end);
  last = out.substr(begin == std::string::npos ? 0 : begin + 1, end + 1 - (begin == std::string::npos ? 0 : begin + 1));
  return nlohmann::json::parse(last);
}

// --- child modes ------------------------------------------------------------------------------

// Context, get, launch and check of kernels.py's `scale`, got as `source`.
int child_launch(const std::string& source) {
  auto& d = Driver::get();  // loads libcuda and calls cuInit
  CUdevice device = 0;
  CUcontext context = nullptr;
  CHECK_CU(cuDeviceGet(&device, 0));
  CHECK_CU(cuDevicePrimaryCtxRetain(&context, device));
  CHECK_CU(cuCtxSetCurrent(context));
  const double context_ms = ms_since(kStart);

  std::vector<float> host(kN);
  for (long long i = 0; i < kN; ++i) host[i] = static_cast<float>(i % 1000);
  CUdeviceptr x = 0, out = 0;
  CHECK_CU(cuMemAlloc(&x, kN * sizeof(float)));
  CHECK_CU(cuMemAlloc(&out, kN * sizeof(float)));
  CHECK_CU(cuMemcpyHtoD(x, host.data(), kN * sizeof(float)));
  CHECK_CU(cuCtxSynchronize());

  const auto get_start = Clock::now();
  auto& scale = JitFunction::get(source, "scale");
  const double get_ms = ms_since(get_start);
  const auto launch_start = Clock::now();
  LaunchConfig config;
  config.grid = Grid{static_cast<unsigned>(cdiv(kN, kBlock)), 1, 1};
  scale(config, reinterpret_cast<float*>(x), reinterpret_cast<float*>(out), kN, 2.0f, kBlock);
  CHECK_CU(cuCtxSynchronize());
  const double launch_ms = ms_since(launch_start);
  const double total_ms = ms_since(kStart);

  std::vector<float> result(kN);
  CHECK_CU(cuMemcpyDtoH(result.data(), out, kN * sizeof(float)));
  for (long long i = 0; i < kN; ++i) {
    if (result[i] != 2.0f * host[i]) throw std::runtime_error("wrong result at " + std::to_string(i));
  }
  (void)d.cuMemFree(x);
  (void)d.cuMemFree(out);
  std::printf("%s\n", nlohmann::json{{"context_ms", context_ms},
                                     {"get_ms", get_ms},
                                     {"launch_ms", launch_ms},
                                     {"total_ms", total_ms},
                                     {"python_loaded", dlsym(RTLD_DEFAULT, "Py_IsInitialized") != nullptr}}
                          .dump()
                          .c_str());
  return 0;
}

// With Python: compiles and launches `scale` (filling Triton's cache and the index), then
// bundles it.
int child_prepare(const fs::path& bundle) {
  child_launch(kKernels);
  BundleFilter filter;
  filter.kernels = {kKernels + ":scale"};
  create_bundle(bundle, filter);
  return 0;
}

// Writes an index of kKernels copies of `scale` (one .py file each, its compiled artifact
// under each) into TRITONRT_CACHE_DIR, then bundles them all.
int child_make_many(const fs::path& index_dir, const fs::path& sources, const fs::path& bundle) {
  std::vector<detail::SkippedKernel> skipped;
  const auto listings = detail::KernelIndex(index_dir).list(skipped);
  const detail::IndexListing* scale = nullptr;
  for (const auto& l : listings) {
    if (l.name == "scale" && !l.artifacts.empty()) scale = &l;
  }
  if (scale == nullptr) throw std::runtime_error("the prepared index holds no compiled scale kernel");
  const detail::KernelIndex* many = detail::KernelIndex::get();
  fs::create_directories(sources);
  std::string unreadable;
  const std::string text = detail::read_file(kKernels, detail::kMaxTextBytes, unreadable).value_or("");
  for (int i = 0; i < kManyKernels; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "k%04d.py", i);
    const std::string source = (sources / name).string();
    std::ofstream(source) << text << "\n# copy " << i << "\n";
    const std::string fingerprint = many->put_kernel(source, "scale", {scale->kernel.description, scale->kernel.rules,
                                                                       "", {}}, detail::inputs_of_files({source}));
    for (const auto& [key, artifact] : scale->artifacts)
      many->put_artifact(source, "scale", fingerprint + "|" + key, artifact);
  }
  create_bundle(bundle);
  return 0;
}

// Loads the large bundle and gets one of its kernels.
int child_load_many(const fs::path& bundle) {
  const auto start = Clock::now();
  const BundleInfo info = load_bundle(bundle);
  const double load_ms = ms_since(start);
  const auto get_start = Clock::now();
  JitFunction::get("/nonexistent/k0500.py", "scale");
  const double get_ms = ms_since(get_start);
  std::printf(
      "%s\n",
      nlohmann::json{{"load_ms", load_ms}, {"get_ms", get_ms}, {"kernels", info.kernels.size()}, {"bytes", info.bytes}}
          .dump()
          .c_str());
  return 0;
}

// --- the parent ---------------------------------------------------------------------------------

struct Mode {
  std::string key, label, command;
};

int run(const std::string& output) {
  char pattern[] = "/tmp/tritonrt-first-launch-XXXXXX";
  if (mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
  const fs::path dir = pattern;
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const std::string python = TRITONRT_BENCH_PYTHON;
  const std::string with_embedded = "env -u TRITONRT_BUNDLE -u TRITONRT_INDEX -u TRITONRT_PYTHON TRITON_CACHE_DIR='" +
                                    (dir / "triton").string() + "' ";
  const std::string common = with_embedded + "TRITONRT_EMBEDDED_BUNDLES=off ";
  const std::string no_python = "TRITONRT_LIBPYTHON=/nonexistent/libpython.so ";
  double wall = 0;
  std::printf("preparing: compiling scale through Python, bundling it, and a bundle of %d kernels\n", kManyKernels);
  run_child(common + "TRITONRT_CACHE_DIR='" + (dir / "index").string() + "' '" + self + "' --child prepare '" +
                (dir / "scale.trb").string() + "'",
            wall);
  run_child(common + "TRITONRT_CACHE_DIR='" + (dir / "many-index").string() + "' '" + self + "' --child make-many '" +
                (dir / "index").string() + "' '" + (dir / "many").string() + "' '" + (dir / "many.trb").string() + "'",
            wall);

  std::vector<Mode> modes = {
      {"index", "(a) tritonrt, index",
       common + no_python + "TRITONRT_CACHE_DIR='" + (dir / "index").string() + "' '" + self + "' --child launch '" +
           kKernels + "'"},
      {"bundle", "(b) tritonrt, bundle",
       common + no_python + "TRITONRT_CACHE_DIR='" + (dir / "empty-index").string() + "' TRITONRT_BUNDLE='" +
           (dir / "scale.trb").string() + "' '" + self + "' --child launch /nonexistent/app/kernels.py"},
      {"triton_cache", "(c) tritonrt, Triton's cache",
       common + "TRITONRT_INDEX=off '" + self + "' --child launch '" + kKernels + "'"},
      {"python", "(d) Python kernel[grid]",
       common + "'" + python + "' '" + kBenchDir + "/first_launch.py' '" + kKernels + "'"},
  };
  if (!embedded_bundles().empty()) {
    modes.insert(modes.begin() + 2,
                 {"embedded", "(e) tritonrt, embedded bundle",
                  with_embedded + no_python + "TRITONRT_CACHE_DIR='" + (dir / "empty-index").string() + "' '" + self +
                      "' --child launch /nonexistent/app/kernels.py"});
  } else {
    std::printf("this build embeds no bundle (built without the tritonrt tool): no row (e)\n");
  }
  nlohmann::json results = {{"device", device_name(0)},
                            {"driver", driver_version()},
                            {"timestamp", utc_timestamp()},
                            {"samples", kSamples},
                            {"modes", nlohmann::json::object()}};
  std::map<std::string, std::map<std::string, Stats>> table;
  for (const auto& mode : modes) {
    std::map<std::string, std::vector<double>> samples;
    for (int i = 0; i < kSamples; ++i) {
      const auto sample = run_child(mode.command, wall);
      if (mode.key != "python" && mode.key != "triton_cache" && sample.at("python_loaded").get<bool>()) {
        throw std::runtime_error(mode.label + ": Python was loaded");
      }
      for (const auto& [field, value] : sample.items()) {
        if (value.is_number()) samples[field].push_back(value.get<double>());
      }
      samples["process_ms"].push_back(wall);
    }
    for (const auto& [field, values] : samples) {
      table[mode.key][field] = summarize(values);
      results["modes"][mode.key][field] = {{"median", table[mode.key][field].median},
                                           {"p10", table[mode.key][field].p10},
                                           {"p90", table[mode.key][field].p90}};
    }
  }
  std::vector<double> load, get;
  nlohmann::json many;
  for (int i = 0; i < kSamples; ++i) {
    many = run_child(common + no_python + "TRITONRT_CACHE_DIR='" + (dir / "empty-index").string() + "' '" + self +
                         "' --child load-many '" + (dir / "many.trb").string() + "'",
                     wall);
    load.push_back(many.at("load_ms").get<double>());
    get.push_back(many.at("get_ms").get<double>());
  }
  results["bundle_1000"] = {{"kernels", many.at("kernels")},
                            {"bytes", many.at("bytes")},
                            {"load_ms", summarize(load).median},
                            {"first_get_ms", summarize(get).median}};

  std::printf("\nfirst launch in a fresh process on %s, ms, median of %d processes\n", device_name(0).c_str(),
              kSamples);
  std::printf("%-30s %9s %9s %9s %11s %11s %9s\n", "", "context", "get", "launch", "get+launch", "main->done",
              "process");
  for (const auto& mode : modes) {
    auto& t = table[mode.key];
    if (mode.key == "python") {
      std::printf("%-30s %9.1f %9s %9.1f %11s %11.1f %9.1f   (import torch+triton %.1f)\n", mode.label.c_str(),
                  t["context_ms"].median, "-", t["launch_ms"].median, "-", t["total_ms"].median, t["process_ms"].median,
                  t["import_ms"].median);
      continue;
    }
    std::printf("%-30s %9.1f %9.3f %9.3f %11.3f %11.1f %9.1f\n", mode.label.c_str(), t["context_ms"].median,
                t["get_ms"].median, t["launch_ms"].median, t["get_ms"].median + t["launch_ms"].median,
                t["total_ms"].median, t["process_ms"].median);
  }
  std::printf("bundle of %d kernels (%.1f MB): load %.2f ms, first get %.3f ms\n", many.at("kernels").get<int>(),
              many.at("bytes").get<double>() / 1e6, summarize(load).median, summarize(get).median);

  // Where (c)'s time goes: one more of its processes, its steps timed by TRITONRT_LOG=info.
  std::string said;
  const auto& triton_cache =
      *std::find_if(modes.begin(), modes.end(), [](const Mode& m) { return m.key == "triton_cache"; });
  run_child("TRITONRT_LOG=info " + triton_cache.command + " 2>&1", wall, &said);
  std::printf("\n%s, step by step (TRITONRT_LOG=info, one more process):\n", triton_cache.label.c_str());
  results["triton_cache_steps"] = nlohmann::json::array();
  std::istringstream lines(said);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(": took ") == std::string::npos) continue;
    std::printf("  %s\n", line.c_str());
    results["triton_cache_steps"].push_back(line);
  }
  write_results(results, output);
  fs::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace tritonrt::bench

int main(int argc, char** argv) {
  using namespace tritonrt::bench;
  if (argc > 2 && std::string(argv[1]) == "--child") {
    const std::string mode = argv[2];
    try {
      if (mode == "launch" && argc == 4) return child_launch(argv[3]);
      if (mode == "prepare" && argc == 4) return child_prepare(argv[3]);
      if (mode == "make-many" && argc == 6) return child_make_many(argv[3], argv[4], argv[5]);
      if (mode == "load-many" && argc == 4) return child_load_many(argv[3]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return 1;
    }
    std::fprintf(stderr, "unknown child mode\n");
    return 2;
  }
  return bench_main(argc, argv, "first_launch.json", run);
}

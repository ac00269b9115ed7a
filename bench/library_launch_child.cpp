// Libraries' kernels called from C++ through tritonrt, for bench/python_launch.py's C++ rows:
// each case of the JSON file it is given (written by python_launch.py from the very calls its
// Python rows time) got by module and name, called with its arguments positionally (the
// parameters no decorator sets, as from C++ they are passed), then timed as python_launch.py
// times: host microseconds per call on a cache hit, the median over repetitions of
// back-to-back launches on one stream, the stream drained before each repetition.
//
//     tritonrt_library_launch_child CASES.json RESULTS.json     writes {"results": [...]}
//
// A case: {"name", "module", "kernel", "grid": [dimension...], "options": {"num_warps": n, ...},
// "args": [{"kind": "tensor", "dtype": "fp32", "bytes": n} | {"kind": "int" | "float" |
// "bool", "value": v} | {"kind": "none"}], "reps", "per_rep"}; a dimension is an integer or
// ["cdiv", n, "CONSTEXPR"] (the call's value of CONSTEXPR, a decorator's choice included).
// A tensor is a buffer of its bytes, every byte 0x3c (1.0-ish in fp16, small in fp32).

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_support.h"
#include "tritonrt/tritonrt.h"

namespace {

using namespace tritonrt::bench;
using nlohmann::json;

struct Case {
  tritonrt::JitFunction* fn = nullptr;
  std::vector<tritonrt::Arg> args;
  tritonrt::LaunchConfig config;
};

// A grid dimension: a number, or cdiv(n, the call's value of a constexpr).
std::int64_t dimension(const json& d, const tritonrt::BoundArgs* bound) {
  if (d.is_number_integer()) return d.get<std::int64_t>();
  if (!d.is_array() || d.size() != 3 || d[0] != "cdiv") throw std::runtime_error("bad grid dimension: " + d.dump());
  return tritonrt::cdiv(d[1].get<std::int64_t>(), bound->integer(d[2].get<std::string>()));
}

bool reads_constexprs(const json& grid) {
  for (const auto& d : grid) {
    if (!d.is_number_integer()) return true;
  }
  return false;
}

tritonrt::Grid grid_of(const json& grid, const tritonrt::BoundArgs* bound) {
  tritonrt::Grid g;
  std::int64_t* dims[] = {&g.x, &g.y, &g.z};
  for (std::size_t i = 0; i < grid.size() && i < 3; ++i) *dims[i] = dimension(grid[i], bound);
  return g;
}

Case prepare(const json& c, CUstream stream, std::vector<CUdeviceptr>& buffers) {
  Case made;
  made.fn = &tritonrt::JitFunction::get(c.at("module").get<std::string>(), c.at("kernel").get<std::string>());
  for (const json& a : c.at("args")) {
    const std::string kind = a.at("kind");
    if (kind == "tensor") {
      const auto bytes = a.at("bytes").get<std::size_t>();
      const auto dtype = tritonrt::parse_dtype(a.at("dtype").get<std::string>());
      if (!dtype) throw std::runtime_error("unknown dtype " + a.dump());
      CUdeviceptr p = 0;
      CHECK_CU(cuMemAlloc(&p, bytes));
      CHECK_CU(cuMemsetD8(p, 0x3c, bytes));
      buffers.push_back(p);
      made.args.push_back(tritonrt::make_arg(tritonrt::DevicePtr{reinterpret_cast<const void*>(p), *dtype, bytes}));
    } else if (kind == "int") {
      made.args.push_back(tritonrt::make_arg(a.at("value").get<std::int64_t>()));
    } else if (kind == "float") {
      made.args.push_back(tritonrt::make_arg(a.at("value").get<double>()));
    } else if (kind == "bool") {
      made.args.push_back(tritonrt::make_arg(a.at("value").get<bool>()));
    } else if (kind == "none") {
      made.args.push_back(tritonrt::make_arg(nullptr));
    } else {
      throw std::runtime_error("unknown argument kind " + a.dump());
    }
  }
  made.config.stream = stream;
  const json& grid = c.at("grid");
  if (reads_constexprs(grid)) {
    made.config.grid_fn = [grid](const tritonrt::BoundArgs& bound) { return grid_of(grid, &bound); };
  } else {
    made.config.grid = grid_of(grid, nullptr);
  }
  // Named: a range-for over a temporary's items() reads the json after it is gone (before C++23).
  const json options = c.value("options", json::object());
  for (const auto& [name, value] : options.items()) {
    if (name == "num_warps") {
      made.config.options.num_warps = value.get<int>();
    } else if (name == "num_stages") {
      made.config.options.num_stages = value.get<int>();
    } else if (name == "num_ctas") {
      made.config.options.num_ctas = value.get<int>();
    } else {
      throw std::runtime_error("unknown launch option " + name);
    }
  }
  return made;
}

double median_us(Case& c, CUstream stream, int reps, int per_rep) {
  std::vector<double> samples;
  for (int rep = 0; rep < kWarmupReps + reps; ++rep) {
    CHECK_CU(cuStreamSynchronize(stream));
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < per_rep; ++i) c.fn->launch_packed(c.config, c.args);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    if (rep >= kWarmupReps) samples.push_back(std::chrono::duration<double, std::micro>(elapsed).count() / per_rep);
  }
  CHECK_CU(cuStreamSynchronize(stream));
  return summarize(samples).median;
}

int run(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s CASES.json RESULTS.json\n", argv[0]);
    return 2;
  }
  const json cases = json::parse(std::ifstream(argv[1]));
  CUdevice device = 0;
  CUcontext ctx = nullptr;
  CHECK_CU(cuDeviceGet(&device, 0));
  CHECK_CU(cuDevicePrimaryCtxRetain(&ctx, device));
  CHECK_CU(cuCtxSetCurrent(ctx));
  CUstream stream = nullptr;
  CHECK_CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  std::vector<CUdeviceptr> buffers;
  json results = json::array();
  for (const json& c : cases) {
    json row{{"case", c.at("name")}};
    try {
      Case prepared = prepare(c, stream, buffers);
      prepared.fn->launch_packed(prepared.config, prepared.args);  // compiles (or tunes) it
      row["median_us"] = median_us(prepared, stream, c.at("reps").get<int>(), c.at("per_rep").get<int>());
    } catch (const std::exception& e) {  // reported in the table, the other cases still run
      row["error"] = e.what();
    }
    results.push_back(row);
  }
  for (CUdeviceptr p : buffers) CHECK_CU(cuMemFree(p));
  std::ofstream(argv[2]) << json{{"results", results}}.dump(2) << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}

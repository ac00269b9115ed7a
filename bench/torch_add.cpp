// Host time per call of an add of two small CUDA tensors, in one run and one table:
// from C++, the tritonrt::add operator (through the dispatcher, as at::add goes) vs at::add;
// from Python (bench/torch_add.py, run by this program), torch.ops.tritonrt.add vs
// torch.add vs the same Triton kernel launched with kernel[grid](...) in a Python wrapper.
//
//     tritonrt_bench_torch_add [results.json]     (default: bench/results/torch_add.json)
//
// Each figure is the median over repetitions of back-to-back calls on torch's current
// stream, the device synchronized between repetitions outside the timed region.
// Targets: the tritonrt op <= at::add from C++ and <= torch.add from Python. For reference it
// also shows the op's kernel launched alone, both ops called boxed (as torch.ops calls them),
// the op called through its overload object, and aten's add through torch.ops.

#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAStream.h>
#include <dlfcn.h>
#include <torch/cuda.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tritonrt/torch.h"

namespace {

constexpr int kElements = 1024;  // a small tensor: the call's host cost dominates
constexpr int kReps = 200;       // repetitions; the median of their per-call times is reported
constexpr int kPerRep = 500;     // back-to-back calls per repetition (well below the queue depth)
constexpr int kWarmupReps = 3;

struct Stats {
  double median = 0, p10 = 0, p90 = 0;
};

Stats stats(std::vector<double> times) {
  std::sort(times.begin(), times.end());
  const auto at = [&](double q) { return times[static_cast<std::size_t>(q * static_cast<double>(times.size() - 1))]; };
  return {at(0.5), at(0.1), at(0.9)};
}

// Per-call microseconds of each variant, repetitions interleaved so that drift affects all alike.
std::map<std::string, std::vector<double>> measure(
    const std::vector<std::pair<std::string, std::function<void()>>>& variants) {
  std::map<std::string, std::vector<double>> times;
  const auto stream = c10::cuda::getCurrentCUDAStream();
  for (int rep = 0; rep < kWarmupReps + kReps; ++rep) {
    for (const auto& [name, call] : variants) {
      stream.synchronize();
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < kPerRep; ++i) call();
      const std::chrono::duration<double, std::micro> elapsed = std::chrono::steady_clock::now() - start;
      if (rep >= kWarmupReps) times[name].push_back(elapsed.count() / kPerRep);
    }
  }
  stream.synchronize();
  return times;
}

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

int run(const std::string& results_path) {
  if (!torch::cuda::is_available()) {
    std::printf("no CUDA GPU here (torch.cuda is unavailable): nothing to measure\n");
    return 0;
  }
  if (dlopen(TRITONRT_OPS_LIBRARY, RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    std::fprintf(stderr, "cannot load the ops library %s: %s\n", TRITONRT_OPS_LIBRARY, dlerror());
    return 1;
  }
  const auto op = c10::Dispatcher::singleton()
                      .findSchemaOrThrow("tritonrt::add", "")
                      .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const c10::Scalar&)>();
  const at::Tensor x = at::randn({kElements}, at::device(at::kCUDA));
  const at::Tensor y = at::randn({kElements}, at::device(at::kCUDA));
  if (!op.call(x, y, 1).equal(at::add(x, y))) {
    std::fprintf(stderr, "tritonrt::add differs from at::add\n");
    return 1;
  }

  // For reference, the op's kernel launched alone: what the operator adds to it is the rest.
  // The library lies in <python dir>/tritonrt/ops/, its kernels in kernels/ beside it.
  const std::filesystem::path ops_dir = std::filesystem::path(TRITONRT_OPS_LIBRARY).parent_path();
  const std::filesystem::path package_dir = ops_dir.parent_path().parent_path();
  auto& kernel = tritonrt::JitFunction::get((ops_dir / "kernels" / "tritonrt_elementwise.py").string(), "add_kernel");
  const at::Tensor out = at::empty_like(x);
  const auto alpha = tritonrt::scalar(tritonrt::DType::fp32, 1.0);
  // Boxed calls, as torch.ops calls an operator from Python: the arguments in a stack of
  // IValues. What Python adds on top of these is its binding.
  const auto boxed = [&](const c10::OperatorHandle& handle) {
    return [&x, &y, &handle] {
      torch::jit::Stack stack{x, y, c10::Scalar(1)};
      handle.callBoxed(stack);
    };
  };
  const c10::OperatorHandle op_handle = c10::Dispatcher::singleton().findSchemaOrThrow("tritonrt::add", "");
  const c10::OperatorHandle aten_handle = c10::Dispatcher::singleton().findSchemaOrThrow("aten::add", "Tensor");
  auto times = measure({{"cpp_tritonrt_op", [&] { op.call(x, y, 1); }},
                        {"cpp_at_add", [&] { at::add(x, y); }},
                        {"cpp_tritonrt_op_boxed", boxed(op_handle)},
                        {"cpp_at_add_boxed", boxed(aten_handle)},
                        {"cpp_tritonrt_launch", [&] {
                           tritonrt::torch::launch(kernel, {.grid = {1}}, x, y, out, alpha, int64_t{kElements}, 1024,
                                                   tritonrt::DType::fp32);
                         }}});

  // Where the op's host time goes: the pieces of one call, each alone (a diagnostic).
  const auto stream = c10::cuda::getCurrentCUDAStream();
  // The op's output allocation (as new_cuda_tensor in ops/ops.cpp makes it).
  const auto new_output = [] {
    return at::detail::empty_generic({kElements}, at::cuda::getCUDADeviceAllocator(),
                                     c10::DispatchKeySet(c10::DispatchKey::CUDA), at::kFloat, std::nullopt);
  };
  const auto pieces =
      measure({{"op_body", [&] { op.redispatch(c10::DispatchKeySet(c10::DispatchKey::CUDA), x, y, 1); }},
               {"core_launch",
                [&] {
                  kernel({.grid = {1}, .stream = stream.stream()}, x, y, out, alpha, int64_t{kElements}, 1024,
                         tritonrt::DType::fp32);
                }},
               {"new_tensor_and_launch",
                [&] {
                  const at::Tensor o = new_output();
                  kernel({.grid = {1}, .stream = stream.stream()}, x, y, o, alpha, int64_t{kElements}, 1024,
                         tritonrt::DType::fp32);
                }},
               {"new_tensor", [&] { (void)new_output(); }},
               {"device_scope", [&] { const tritonrt::torch::DeviceScope scope(x.get_device()); }},
               {"current_stream", [&] { (void)c10::cuda::getCurrentCUDAStream(x.get_device()); }},
               {"tensor_checks",
                [&] { tritonrt::torch::TensorChecks("add").required(x, "x").required(y, "y").required(out, "out"); }}});

  // The Python side, in a Python process of its own as users run it.
  const std::filesystem::path python_results =
      std::filesystem::temp_directory_path() / ("tritonrt_bench_torch_add_" + std::to_string(getpid()) + ".json");
  const char* python = std::getenv("TRITONRT_PYTHON");
  const std::string command = quoted(python != nullptr && *python != '\0' ? python : TRITONRT_BENCH_PYTHON) + " " +
                              quoted(std::string(TRITONRT_BENCH_DIR) + "/torch_add.py") + " " +
                              quoted(package_dir.string()) + " " + std::to_string(kElements) + " " +
                              std::to_string(kReps) + " " + std::to_string(kPerRep) + " " +
                              quoted(python_results.string());
  if (std::system(command.c_str()) != 0) {
    std::fprintf(stderr, "the Python part failed: %s\n", command.c_str());
    return 1;
  }
  nlohmann::json python_part = nlohmann::json::parse(std::ifstream(python_results));
  std::filesystem::remove(python_results);
  for (const auto& [name, values] : python_part.at("times_us").items()) times[name] = values.get<std::vector<double>>();

  const std::pair<const char*, const char*> rows[] = {
      {"cpp_at_add", "C++     at::add"},
      {"cpp_tritonrt_op", "C++     tritonrt::add op (dispatcher)"},
      {"cpp_tritonrt_launch", "C++     its kernel alone (torch::launch)"},
      {"cpp_at_add_boxed", "C++     aten::add boxed (callBoxed)"},
      {"cpp_tritonrt_op_boxed", "C++     tritonrt::add boxed (callBoxed)"},
      {"py_torch_add", "Python  torch.add"},
      {"py_tritonrt_op", "Python  torch.ops.tritonrt.add"},
      {"py_tritonrt_op_overload", "Python  torch.ops.tritonrt.add.default"},
      {"py_aten_op", "Python  torch.ops.aten.add (same binding)"},
      {"py_triton_kernel", "Python  add_kernel[grid](...) in a wrapper"}};
  const std::string device = at::cuda::getCurrentDeviceProperties()->name;
  std::printf("host time per call: add of two %d-element fp32 tensors on %s\n", kElements, device.c_str());
  std::printf("(median of %d repetitions of %d calls; p10 and p90 of the repetitions)\n\n", kReps, kPerRep);
  std::printf("%-46s %9s %9s %9s\n", "caller and implementation", "median us", "p10", "p90");
  nlohmann::json results;
  std::map<std::string, Stats> s;
  for (const auto& [key, label] : rows) {
    s[key] = stats(times.at(key));
    std::printf("%-46s %9.2f %9.2f %9.2f\n", label, s[key].median, s[key].p10, s[key].p90);
    results[key] = {{"median_us", s[key].median}, {"p10_us", s[key].p10}, {"p90_us", s[key].p90}};
  }
  std::printf("\nwhere the tritonrt op's time goes (each piece alone, median us per call)\n\n");
  const std::pair<const char*, const char*> piece_rows[] = {
      {"op_body", "op's CUDA kernel, no dispatcher (redispatch)"},
      {"new_tensor_and_launch", "new output tensor, then the JitFunction launch"},
      {"core_launch", "JitFunction launch, stream given (no adapter)"},
      {"new_tensor", "output tensor from the caching allocator"},
      {"device_scope", "DeviceScope, device already current"},
      {"current_stream", "getCurrentCUDAStream"},
      {"tensor_checks", "TensorChecks of 3 tensors"}};
  nlohmann::json breakdown;
  for (const auto& [key, label] : piece_rows) {
    const Stats p = stats(pieces.at(key));
    std::printf("%-46s %9.3f\n", label, p.median);
    breakdown[key] = {{"median_us", p.median}, {"p10_us", p.p10}, {"p90_us", p.p90}};
  }

  const bool cpp_target = s["cpp_tritonrt_op"].median <= s["cpp_at_add"].median;
  const bool python_target = s["py_tritonrt_op"].median <= s["py_torch_add"].median;
  std::printf("\ntarget: tritonrt op <= at::add from C++:      %s (%.2f vs %.2f us)\n", cpp_target ? "met" : "MISSED",
              s["cpp_tritonrt_op"].median, s["cpp_at_add"].median);
  std::printf("target: tritonrt op <= torch.add from Python: %s (%.2f vs %.2f us)\n", python_target ? "met" : "MISSED",
              s["py_tritonrt_op"].median, s["py_torch_add"].median);

  const nlohmann::json report = {
      {"benchmark", "torch_add"},
      {"what", "host time per call, add of two small fp32 CUDA tensors"},
      {"device", device},
      {"elements", kElements},
      {"repetitions", kReps},
      {"calls_per_repetition", kPerRep},
      {"torch", python_part.at("torch")},
      {"triton", python_part.at("triton")},
      {"results", results},
      {"op_breakdown", breakdown},
      {"targets", {{"cpp_tritonrt_op_le_at_add", cpp_target}, {"py_tritonrt_op_le_torch_add", python_target}}}};
  std::filesystem::create_directories(std::filesystem::absolute(results_path).parent_path());
  std::ofstream(results_path) << report.dump(2) << "\n";
  std::printf("\nsaved %s\n", results_path.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc > 1 ? argv[1] : std::string(TRITONRT_BENCH_DIR) + "/results/torch_add.json");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}

// The first call of an autotuned kernel from C++: bench/kernels.py's `tuned_matmul` (32
// configs) got and launched once in this fresh process, which compiles and times every config
// (TRITONRT_COMPILE_THREADS at once; 1 as Triton does). Run by bench/first_tuning.py, which
// gives each run empty caches and compares it with Triton's own first call:
//
//     tritonrt_first_tuning_child M N K   prints {"seconds": ..., "get_seconds": ...}
//
// Links no libpython: tritonrt loads one to compile, as any tritonrt program does.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench_support.h"
#include "tritonrt/tritonrt.h"

namespace {

using namespace tritonrt::bench;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

int run(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s M N K\n", argv[0]);
    return 2;
  }
  const long long m = std::atoll(argv[1]), n = std::atoll(argv[2]), k = std::atoll(argv[3]);
  CUdevice device = 0;
  CUcontext ctx = nullptr;
  CHECK_CU(cuDeviceGet(&device, 0));
  CHECK_CU(cuDevicePrimaryCtxRetain(&ctx, device));
  CHECK_CU(cuCtxSetCurrent(ctx));
  CUdeviceptr a = 0, b = 0, c = 0;
  CHECK_CU(cuMemAlloc(&a, 2 * m * k));
  CHECK_CU(cuMemAlloc(&b, 2 * k * n));
  CHECK_CU(cuMemAlloc(&c, 2 * m * n));
  CHECK_CU(cuMemsetD8(a, 0, 2 * m * k));
  CHECK_CU(cuMemsetD8(b, 0, 2 * k * n));
  const auto fp16 = [](CUdeviceptr p, long long elements) {
    return tritonrt::DevicePtr{reinterpret_cast<const void*>(p), tritonrt::DType::fp16,
                               static_cast<std::size_t>(2 * elements)};
  };
  const tritonrt::LaunchConfig config{.grid_fn = [](const tritonrt::BoundArgs& args) {
    return tritonrt::Grid{tritonrt::cdiv(args.integer("M"), args.integer("BLOCK_M")) *
                          tritonrt::cdiv(args.integer("N"), args.integer("BLOCK_N"))};
  }};
  const auto start = Clock::now();
  auto& matmul = tritonrt::JitFunction::get(kKernels, "tuned_matmul");
  const double got = seconds_since(start);
  matmul(config, fp16(a, m * k), fp16(b, k * n), fp16(c, m * n), m, n, k, k, 1LL, n, 1LL, n, 1LL);
  CHECK_CU(cuCtxSynchronize());
  std::printf("{\"seconds\": %f, \"get_seconds\": %f}\n", seconds_since(start), got);
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

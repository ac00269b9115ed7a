// A program whose kernels tritonrt_add_kernels embedded at build time, run where neither
// Python nor its kernels' .py files are (argv[1]: the path it gets them by, which need not
// exist). Prints the hash of each kernel (each config of the autotuned one) per embedded
// target; with a GPU, also launches both and checks their results on the host. Fails if
// Python was loaded.
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <tritonrt/bundle.h>
#include <tritonrt/tritonrt.h>

namespace {

constexpr long long kN = 1 << 20;

bool libpython_mapped() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("libpython") != std::string::npos) return true;
  }
  return dlsym(RTLD_DEFAULT, "Py_IsInitialized") != nullptr;
}

// The CUDA driver's calls this program makes itself, when there is a GPU.
struct Cuda {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  template <class F>
  F fn(const char* name) const {
    return reinterpret_cast<F>(dlsym(lib, name));
  }
};

// Launches both kernels on device memory and checks them: out = x + y, then out = 2 * x.
int launch_and_check(tritonrt::JitFunction& add, tritonrt::JitFunction& tuned) {
  const Cuda cuda;
  using Alloc = int (*)(unsigned long long*, std::size_t);
  using Copy = int (*)(unsigned long long, const void*, std::size_t);
  using Back = int (*)(void*, unsigned long long, std::size_t);
  using Sync = int (*)();
  const auto alloc = cuda.fn<Alloc>("cuMemAlloc_v2");
  const auto to_device = cuda.fn<Copy>("cuMemcpyHtoD_v2");
  const auto to_host = cuda.fn<Back>("cuMemcpyDtoH_v2");
  const auto sync = cuda.fn<Sync>("cuCtxSynchronize");
  // The device's primary context, current: tritonrt launches in the current context.
  int device = 0;
  void* context = nullptr;
  if (cuda.fn<int (*)(unsigned)>("cuInit")(0) || cuda.fn<int (*)(int*, int)>("cuDeviceGet")(&device, 0) ||
      cuda.fn<int (*)(void**, int)>("cuDevicePrimaryCtxRetain")(&context, device) ||
      cuda.fn<int (*)(void*)>("cuCtxSetCurrent")(context)) {
    std::fprintf(stderr, "no CUDA context\n");
    return 1;
  }
  std::vector<float> x(kN), y(kN), out(kN);
  for (long long i = 0; i < kN; ++i) {
    x[i] = static_cast<float>(i % 977) * 0.5f;
    y[i] = static_cast<float>(i % 131);
  }
  unsigned long long dx = 0, dy = 0, dout = 0;
  if (alloc(&dx, kN * 4) || alloc(&dy, kN * 4) || alloc(&dout, kN * 4) || to_device(dx, x.data(), kN * 4) ||
      to_device(dy, y.data(), kN * 4)) {
    std::fprintf(stderr, "device memory failed\n");
    return 1;
  }
  auto* px = reinterpret_cast<float*>(dx);
  auto* py = reinterpret_cast<float*>(dy);
  auto* pout = reinterpret_cast<float*>(dout);
  const auto start = std::chrono::steady_clock::now();
  add({.grid = {tritonrt::cdiv(kN, 1024)}}, px, py, pout, kN, 1024);
  const std::chrono::duration<double, std::milli> first = std::chrono::steady_clock::now() - start;
  // Its module loaded onto the device and launched (the artifact was read from the bundle above).
  std::printf("first launch of add_kernel: %.3f ms\n", first.count());
  if (sync() || to_host(out.data(), dout, kN * 4)) return 1;
  for (long long i = 0; i < kN; ++i) {
    if (out[i] != x[i] + y[i]) {
      std::fprintf(stderr, "add_kernel: wrong result at %lld\n", i);
      return 1;
    }
  }
  tritonrt::LaunchConfig config;
  config.grid_fn = [](const tritonrt::BoundArgs& a) {
    return tritonrt::Grid{tritonrt::cdiv(a.integer("n"), a.integer("BLOCK"))};
  };
  tuned(config, px, pout, kN, 2.0f);  // tuned here, on the GPU, from the embedded configs
  if (sync() || to_host(out.data(), dout, kN * 4)) return 1;
  for (long long i = 0; i < kN; ++i) {
    if (out[i] != 2.0f * x[i]) {
      std::fprintf(stderr, "tuned_scale: wrong result at %lld\n", i);
      return 1;
    }
  }
  std::printf("launched add_kernel and tuned_scale on the GPU: results match the host\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string source = argc > 1 ? argv[1] : "kernels.py";
  try {
    const auto bundles = tritonrt::embedded_bundles();
    std::printf("embedded bundles: %zu\n", bundles.size());
    auto& add = tritonrt::JitFunction::get(source, "add_kernel");
    auto& tuned = tritonrt::JitFunction::get(source, "tuned_scale");
    auto* stand_in = reinterpret_cast<float*>(0x10000);  // compiling only specializes its alignment
    for (const char* target : {"cuda:80", "cuda:90"}) {
      const auto t = tritonrt::Target::parse(target);
      const auto a = add.compile(t, {}, stand_in, stand_in, stand_in, kN, 1024);
      std::printf("add_kernel %s %s\n", a->metadata.target.str().c_str(), a->metadata.hash.c_str());
      for (const auto& c : tuned.compile_configs(t, {}, stand_in, stand_in, kN, 2.0f)) {
        if (!c.artifact) throw tritonrt::CompileError(c.error);
        std::printf("tuned_scale %s %s\n", c.artifact->metadata.target.str().c_str(),
                    c.artifact->metadata.hash.c_str());
      }
    }
    int status = 0;
    bool gpu = false;
    try {
      (void)tritonrt::Target::current();
      gpu = true;
    } catch (const tritonrt::Error&) {
      std::printf("no GPU: compile-only\n");
    }
    if (gpu) status = launch_and_check(add, tuned);
    if (libpython_mapped()) {
      std::fprintf(stderr, "Python was loaded\n");
      return 1;
    }
    return status;
  } catch (const tritonrt::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}

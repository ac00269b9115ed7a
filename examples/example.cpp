// The main job. With a GPU: launch the example kernels through tritonrt on fresh random
// inputs and check every output element against a host reference. Without one: compile
// them for the default target cuda:90 and report what was built.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "tritonrt/tritonrt.h"

namespace {

using tritonrt::DevicePtr;
using tritonrt::DType;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw tritonrt::Error(std::string(what) + ": " + cudaGetErrorString(e));
}

void report(const tritonrt::Artifact& art) {
  std::printf("%-16s %-10s %-6d %-8d %-10s %s\n", art.metadata.name.c_str(), art.metadata.target.str().c_str(),
              art.metadata.num_warps, art.metadata.shared, (std::to_string(art.binary.size()) + " B").c_str(),
              art.specialization.repr().c_str());
}

int compile_only(const char* kernels) {
  const auto target = tritonrt::Target::parse("cuda:90");
  std::printf("compiling for the default target %s instead (nothing is launched)\n", target.str().c_str());
  std::printf("\n%-16s %-10s %-6s %-8s %-10s %s\n", "kernel", "target", "warps", "shared", "binary", "specialization");
  // Stand-in device addresses: compiling needs only their types and alignment.
  const DevicePtr x{reinterpret_cast<const void*>(0x10000), DType::fp32};
  const DevicePtr y{reinterpret_cast<const void*>(0x20000), DType::fp32};
  auto& add = tritonrt::JitFunction::get(kernels, "add_kernel");
  auto& softmax = tritonrt::JitFunction::get(kernels, "softmax_kernel");
  report(*add.compile(target, {}, x, y, x, std::int32_t{1 << 20}, 1024));
  report(*softmax.compile(target, {.num_warps = 8}, y, x, 4096, 4096, 781, 1024));
  return 0;
}

int launch_and_check(const char* kernels) {
  check(cudaSetDevice(0), "selecting device 0");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "creating a stream");

  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-4.f, 4.f);
  const int n = 1'000'003;  // not a multiple of the block: exercises the mask
  const int rows = 781, cols = 1000;
  std::vector<float> x(n), y(n), out(n);
  for (auto& v : x) v = dist(rng);
  for (auto& v : y) v = dist(rng);
  std::vector<float> m(static_cast<std::size_t>(rows) * cols), sm(m.size());
  for (auto& v : m) v = dist(rng);

  auto alloc = [&](std::size_t bytes) {
    void* p = nullptr;
    check(cudaMalloc(&p, bytes), "allocating device memory");
    return static_cast<float*>(p);
  };
  float *px = alloc(n * 4), *py = alloc(n * 4), *pout = alloc(n * 4), *pm = alloc(m.size() * 4),
        *psm = alloc(m.size() * 4);
  check(cudaMemcpy(px, x.data(), n * 4, cudaMemcpyHostToDevice), "copying x");
  check(cudaMemcpy(py, y.data(), n * 4, cudaMemcpyHostToDevice), "copying y");
  check(cudaMemcpy(pm, m.data(), m.size() * 4, cudaMemcpyHostToDevice), "copying m");
  check(cudaMemset(pout, 0xff, n * 4), "poisoning out");  // NaNs: unwritten elements fail
  check(cudaMemset(psm, 0xff, m.size() * 4), "poisoning softmax out");

  auto& add = tritonrt::JitFunction::get(kernels, "add_kernel");
  auto& softmax = tritonrt::JitFunction::get(kernels, "softmax_kernel");
  const tritonrt::LaunchConfig add_cfg{.grid = {tritonrt::cdiv(n, 1024)}, .stream = stream};
  add(add_cfg, px, py, pout, n, 1024);
  const tritonrt::LaunchConfig sm_cfg{.grid = {rows}, .stream = stream, .options = {.num_warps = 8}};
  softmax(sm_cfg, psm, pm, cols, cols, cols, 1024);
  check(cudaStreamSynchronize(stream), "waiting for the kernels");
  check(cudaMemcpy(out.data(), pout, n * 4, cudaMemcpyDeviceToHost), "copying out");
  check(cudaMemcpy(sm.data(), psm, sm.size() * 4, cudaMemcpyDeviceToHost), "copying softmax out");

  std::size_t add_bad = 0;
  for (int i = 0; i < n; ++i) add_bad += !(out[i] == x[i] + y[i]);
  double sm_err = 0;
  for (int r = 0; r < rows; ++r) {
    const float* row = &m[static_cast<std::size_t>(r) * cols];
    const double mx = *std::max_element(row, row + cols);
    double sum = 0;
    for (int c = 0; c < cols; ++c) sum += std::exp(row[c] - mx);
    for (int c = 0; c < cols; ++c) {
      const double ref = std::exp(row[c] - mx) / sum;
      const double got = sm[static_cast<std::size_t>(r) * cols + c];
      sm_err = std::isnan(got) ? INFINITY : std::max(sm_err, std::fabs(got - ref) / std::max(ref, 1e-30));
    }
  }
  std::printf("\n%-16s %-10s %-6s %-8s %-10s %s\n", "kernel", "target", "warps", "shared", "binary", "specialization");
  report(*add.artifact_for(add_cfg, px, py, pout, n, 1024));
  report(*softmax.artifact_for(sm_cfg, psm, pm, cols, cols, cols, 1024));
  std::printf("\nadd:     %d elements, %zu mismatches (exact fp32 expected)\n", n, add_bad);
  std::printf("softmax: %dx%d, max relative error %.2e (limit 1e-5)\n", rows, cols, sm_err);
  for (float* p : {px, py, pout, pm, psm}) cudaFree(p);
  cudaStreamDestroy(stream);
  const bool ok = add_bad == 0 && sm_err < 1e-5;
  std::printf("%s\n", ok ? "OK: results match the host reference" : "FAILED: results differ from the host reference");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const char* kernels = argc > 1 ? argv[1] : TRITONRT_EXAMPLE_KERNELS;
  try {
    int devices = 0;
    if (const cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess || devices == 0) {
      // tritonrt's words for what is missing (the CUDA runtime's would speak of versions).
      std::string why = "the CUDA driver sees no device";
      try {
        (void)tritonrt::Target::current();
      } catch (const tritonrt::Error& error) {
        why = error.what();
        if (why.starts_with("tritonrt: ")) why.erase(0, 10);
      }
      std::printf("no GPU here: %s\n", why.c_str());
      return compile_only(kernels);
    }
    std::printf("GPU found: launching on device 0 (%s)\n", tritonrt::Target::current().str().c_str());
    return launch_and_check(kernels);
  } catch (const tritonrt::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}

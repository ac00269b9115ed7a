// The main job: compile the example kernels through tritonrt and report what was built.
// With a GPU the kernels compile for it; without one, for the default target cuda:90.

#include <cstdio>
#include <cstdint>

#include "tritonrt/tritonrt.h"

int main(int argc, char** argv) {
  using tritonrt::DType;
  using tritonrt::DevicePtr;
  const char* kernels = argc > 1 ? argv[1] : TRITONRT_EXAMPLE_KERNELS;
  tritonrt::Target target;
  try {
    target = tritonrt::Target::current();
    std::printf("GPU found: compiling for the current device, %s\n", target.str().c_str());
  } catch (const tritonrt::DriverError& e) {
    target = tritonrt::Target::parse("cuda:90");
    std::printf("no GPU here (%s)\ncompiling for the default target %s instead\n", e.what(), target.str().c_str());
  }
  try {
    // Stand-in device addresses: compiling needs only their types and alignment.
    const DevicePtr x{reinterpret_cast<const void*>(0x10000), DType::fp32};
    const DevicePtr y{reinterpret_cast<const void*>(0x20000), DType::fp32};
    const DevicePtr out{reinterpret_cast<const void*>(0x30000), DType::fp32};
    auto& add = tritonrt::JitFunction::get(kernels, "add_kernel");
    auto& softmax = tritonrt::JitFunction::get(kernels, "softmax_kernel");
    const auto a = add.compile(target, {}, x, y, out, std::int32_t{1 << 20}, 1024);
    const auto s = softmax.compile(target, {.num_warps = 8}, out, x, 4096, 4096, 781, 1024);
    std::printf("\n%-16s %-10s %-8s %-10s %-12s %s\n", "kernel", "target", "warps", "shared", "binary", "specialization");
    for (const auto& art : {a, s}) {
      std::printf("%-16s %-10s %-8d %-10d %-12s %s\n", art->metadata.name.c_str(), art->metadata.target.str().c_str(),
                  art->metadata.num_warps, art->metadata.shared,
                  (std::to_string(art->binary.size()) + " B").c_str(), art->specialization.repr().c_str());
    }
  } catch (const tritonrt::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}

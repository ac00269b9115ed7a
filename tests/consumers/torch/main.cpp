// Links the torch adapter: compiles argv[1]'s add_kernel for cuda:90 with a tensor's dtype.
#include <ATen/ATen.h>
#include <torch/version.h>
#include <tritonrt/torch.h>
#include <tritonrt/tritonrt.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s KERNELS.py\n", argv[0]);
    return 2;
  }
  try {
    const at::Tensor x = at::ones({4096});
    auto& add = tritonrt::JitFunction::get(argv[1], "add_kernel");
    const tritonrt::DevicePtr stand_in{reinterpret_cast<const void*>(0x10000), tritonrt::DType::fp32};
    const auto artifact =
        add.compile(tritonrt::Target::parse("cuda:90"), {}, stand_in, stand_in, stand_in, x.numel(), 1024);
    std::printf("tritonrt %s with torch %s: %s for %s, hash %s\n", TRITONRT_VERSION, TORCH_VERSION,
                artifact->metadata.name.c_str(), artifact->metadata.target.str().c_str(),
                artifact->metadata.hash.c_str());
    return 0;
  } catch (const tritonrt::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}

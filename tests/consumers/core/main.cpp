// Compiles argv[1]'s add_kernel for cuda:90 through an installed tritonrt.
#include <tritonrt/tritonrt.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s KERNELS.py\n", argv[0]);
    return 2;
  }
  try {
    auto& add = tritonrt::JitFunction::get(argv[1], "add_kernel");
    auto* stand_in = reinterpret_cast<float*>(0x10000);  // only its alignment is specialized on
    const auto artifact = add.compile(tritonrt::Target::parse("cuda:90"), {}, stand_in, stand_in, stand_in, 4096, 1024);
    std::printf("tritonrt %s: %s for %s, hash %s\n", TRITONRT_VERSION, artifact->metadata.name.c_str(),
                artifact->metadata.target.str().c_str(), artifact->metadata.hash.c_str());
    return 0;
  } catch (const tritonrt::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}

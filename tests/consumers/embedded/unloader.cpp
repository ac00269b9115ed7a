// Loads the shared library argv[1] (which embeds a bundle), unloads it, then gets a kernel
// of that bundle by argv[2] (a path that need not exist) and prints its parameters: the
// bundle the library registered must still be readable after dlclose.
#include <dlfcn.h>

#include <cstdio>

#include <tritonrt/bundle.h>
#include <tritonrt/tritonrt.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: unloader LIBRARY KERNELS.py\n");
    return 2;
  }
  void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  dlclose(library);
  try {
    auto& add = tritonrt::JitFunction::get(argv[2], "add_kernel");
    std::printf("after dlclose: add_kernel with %zu parameters, %zu embedded bundle(s)\n",
                add.signature().params.size(), tritonrt::embedded_bundles().size());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}

// What the tests of processes without Python share: their binaries link no libpython, and
// TRITONRT_LIBPYTHON points nowhere, so every call that needs Python fails. Kernels are
// compiled by other processes (the tritonrt CLI, or the test binary run again with Python
// allowed), as a deployment compiles them once and starts many processes after.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include <unistd.h>

#include "tritonrt/tritonrt.h"

namespace tritonrt::test {

namespace fs = std::filesystem;

inline const fs::path kKernels = TRITONRT_TEST_KERNELS;

// One scratch folder per run: the kernels' copies, Triton's cache and tritonrt's index.
// Set before the first JitFunction::get reads the environment. A child process run by a
// test (TRITONRT_INDEX_TEST_PARENT set) uses its parent's folder and environment as given.
class Scratch : public ::testing::Environment {
 public:
  void SetUp() override {
    if (const char* parent = std::getenv("TRITONRT_INDEX_TEST_PARENT")) {
      dir = parent;
      return;
    }
    char pattern[] = "/tmp/tritonrt-index-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir = pattern;
    setenv("TRITON_CACHE_DIR", (dir / "triton").c_str(), 1);
    setenv("TRITONRT_CACHE_DIR", (dir / "index").c_str(), 1);
    setenv("TRITONRT_LIBPYTHON", "/nonexistent/libpython-for-this-test.so", 1);
    unsetenv("TRITONRT_INDEX");
    unsetenv("TRITONRT_PYTHON");
    unsetenv("TRITONRT_BUNDLE");
    fs::copy(kKernels / "signatures.py", dir / "signatures.py");
    fs::copy(kKernels / "pkg", dir / "pkg");
    fs::copy(kKernels / "library_style.py", dir / "library_style.py");
    fs::copy(kKernels / "gpu_kernels.py", dir / "gpu_kernels.py");
    fs::copy(kKernels / "descriptor_kernels.py", dir / "descriptor_kernels.py");
    fs::copy(kKernels / "hopper_kernels.py", dir / "hopper_kernels.py");
    // Older than the processes that import them, as a library's files are: where the index
    // cannot check a kernel against its file's text (an autotune's or heuristics' arguments),
    // it files the kernel only if no file of it changed since the process started.
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      if (entry.is_regular_file()) fs::last_write_time(entry.path(), entry.last_write_time() - std::chrono::hours(1));
    }
  }
  void TearDown() override {
    if (std::getenv("TRITONRT_INDEX_TEST_PARENT") == nullptr) fs::remove_all(dir);
  }

  fs::path dir;
};
inline Scratch* const scratch = static_cast<Scratch*>(::testing::AddGlobalTestEnvironment(new Scratch));

inline std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline void write(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Runs a shell command; returns its exit status (pclose's) and its output, stderr included.
inline std::pair<int, std::string> run(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed: " + command};
  std::string out;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  return {pclose(pipe), out};
}

// The tritonrt CLI with `arguments` (shell words), in a process of its own that has Python.
inline std::pair<int, std::string> cli(const std::string& arguments) {
  return run("env -u TRITONRT_LIBPYTHON TRITONRT_PYTHON='" TRITONRT_TEST_PYTHON_EXE "' '" TRITONRT_TEST_CLI "' " +
             arguments);
}

// This test binary again, running the child tests `filter` selects on the scratch folder:
// with `environment` (shell assignments, quoted) added, and allowed to load Python when
// `with_python`.
inline std::pair<int, std::string> run_child(const std::string& filter, const std::string& environment = "",
                                             bool with_python = false) {
  const std::string python =
      with_python ? "env -u TRITONRT_LIBPYTHON TRITONRT_PYTHON='" TRITONRT_TEST_PYTHON_EXE "' " : std::string();
  return run(python + "TRITONRT_INDEX_TEST_PARENT='" + scratch->dir.string() + "' " + environment + " /proc/" +
             std::to_string(getpid()) + "/exe --gtest_filter='" + filter + "'");
}

// `tritonrt compile` for cuda:90 in a process of its own: returns the hash it printed.
inline std::string compile_elsewhere(const std::string& kernel, const std::string& signature) {
  const auto [status, out] = cli("compile '" + kernel + "' --target cuda:90 --signature '" + signature + "'");
  EXPECT_EQ(status, 0) << out;
  const auto at = out.find("\nhash");
  if (at == std::string::npos) return "no hash in: " + out;
  const auto begin = out.find_first_not_of(' ', at + 5);
  return out.substr(begin, out.find('\n', begin) - begin);
}

inline bool python_is_mapped() { return read("/proc/self/maps").find("libpython") != std::string::npos; }

inline float* fptr(std::uintptr_t a) { return reinterpret_cast<float*>(a); }

// The CLI's stand-in addresses: 16-byte aligned for `*fp32`, not for `*fp32:unaligned`.
inline constexpr char kPlainSignature[] = R"(*fp32,*fp32:unaligned,4096,1,0.5,True,None,64,"fast")";

}  // namespace tritonrt::test

// The Python side of the benchmarks that embed an interpreter: bench/triton_launch.py run in
// the program's own interpreter.
#pragma once

#include <pybind11/embed.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "bench_support.h"
#include "python_gil.h"

namespace tritonrt::bench {

// Triton's side launches the module objects tritonrt imported (_tritonrt_bridge.import_source), so
// tritonrt must import them through Python on every run: with the index on, a second run
// would take its kernels from the index and import nothing. The hit path timed is the same.
// Set before main(); TRITONRT_INDEX=on in the environment wins.
[[maybe_unused]] inline const bool kIndexOff = setenv("TRITONRT_INDEX", "off", 0) == 0;

// bench/triton_launch.py, executed in this process's interpreter: its functions by name.
inline pybind11::dict triton_side() {
  namespace py = pybind11;
  py::dict scope;
  scope["__name__"] = "triton_launch";
  scope["__file__"] = kBenchDir + "/triton_launch.py";
  std::ifstream file(kBenchDir + "/triton_launch.py");
  std::stringstream source;
  source << file.rdbuf();
  py::exec(source.str(), scope);
  return scope;
}

}  // namespace tritonrt::bench

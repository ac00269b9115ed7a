// The GIL of tritonrt's embedded interpreter, for code that runs Python beside tritonrt: the
// tests that ask Triton for reference answers, the benchmarks that time Triton's launches.
#pragma once

#include <pybind11/embed.h>

#include <string>

#include "tritonrt/version.h"

namespace tritonrt::test {

// Holds the GIL of tritonrt's interpreter, starting it (and its bridge) first: kernels served
// by tritonrt's index or a bundle leave Python unstarted, and the GIL of an interpreter that
// was never started is a crash. Started through the public API (asking Triton's version
// starts Python), which programs linking libtritonrt and the static internals both have.
class [[gnu::visibility("hidden")]] ReferenceGil {  // hidden, as pybind11's types are
 private:
  // Members are made in this order: the interpreter is started before the GIL is taken.
  [[maybe_unused]] std::string triton_ = triton_version();
  pybind11::gil_scoped_acquire gil_{};
};

}  // namespace tritonrt::test

// Test helper: asks Triton itself (tests/python/triton_reference.py) for the reference
// answer to a call, in the interpreter tritonrt uses.
#pragma once

#include <gtest/gtest.h>
#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "python_gil.h"
#include "tritonrt/tritonrt.h"

namespace tritonrt::test {

inline const std::string kKernels = TRITONRT_TEST_KERNELS;  // tests/kernels

// The message of the ArgumentError `f` throws (a test failure when it throws none).
template <class F>
std::string argument_error(F&& f) {
  try {
    f();
  } catch (const ArgumentError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ArgumentError";
  return "";
}

// These suites check tritonrt's path through Python against Triton's: tritonrt's index
// (tests/cpu/test_index.cpp, tests/python/test_index.py test it) would serve their calls
// without it on a second run. Set before main(); TRITONRT_INDEX=on in the environment wins.
[[maybe_unused]] inline const bool kIndexOff = setenv("TRITONRT_INDEX", "off", 0) == 0;

inline pybind11::object reference_module() {
  namespace py = pybind11;
  py::module_::import("sys").attr("path").attr("append")(TRITONRT_TEST_PYTHON);
  return py::module_::import("triton_reference");
}

// The JITFunction behind `name` in `source`, as tritonrt imported it (autotune unwrapped).
inline pybind11::object kernel_object(const std::string& source, const std::string& name) {
  namespace py = pybind11;
  py::object fn = py::module_::import("_tritonrt_bridge").attr("import_source")(source).attr(name.c_str());
  while (!py::hasattr(fn, "device_caches")) fn = fn.attr("fn");
  return fn;
}

// Evaluates a Python list of arguments; `P(address, 'float32')` makes a stand-in tensor,
// `TensorDescriptor(P(...), shape, strides, block_shape)` a descriptor of one, and
// `GluonTensorDescriptor(P(...), shape, strides, block_shape, NVMMASharedLayout(...))` Gluon's.
inline pybind11::object python_args(const std::string& expr) {
  namespace py = pybind11;
  py::dict scope;
  scope["P"] = reference_module().attr("HostPointer");
  scope["tl"] = py::module_::import("triton.language");
  scope["TensorDescriptor"] = py::module_::import("triton.tools.tensor_descriptor").attr("TensorDescriptor");
  if (expr.find("torch.") != std::string::npos) scope["torch"] = py::module_::import("torch");
  if (expr.find("Gluon") != std::string::npos) {
    scope["GluonTensorDescriptor"] =
        py::module_::import("triton.experimental.gluon.nvidia.hopper").attr("TensorDescriptor");
    scope["NVMMASharedLayout"] =
        py::module_::import("triton.experimental.gluon.language._layouts").attr("NVMMASharedLayout");
    scope["gl"] = py::module_::import("triton.experimental.gluon.language");
  }
  return py::eval(expr, scope);
}

inline std::string reference_specialization(const std::string& source, const std::string& name, const std::string& args,
                                            const std::string& target = "cuda:90") {
  const ReferenceGil gil;
  return reference_module()
      .attr("specialization")(kernel_object(source, name), python_args(args), target)
      .cast<std::string>();
}

inline std::string reference_hash(const std::string& source, const std::string& name, const std::string& args,
                                  const std::string& target, const pybind11::dict* options = nullptr) {
  const ReferenceGil gil;
  const pybind11::dict kwargs = options ? *options : pybind11::dict();
  return reference_module()
      .attr("compiled_hash")(kernel_object(source, name), python_args(args), target, **kwargs)
      .cast<std::string>();
}

}  // namespace tritonrt::test

namespace tritonrt::test {

// The object bound to `name` in `source` as tritonrt imported it, decorators included.
inline pybind11::object decorated_object(const std::string& source, const std::string& name) {
  return pybind11::module_::import("_tritonrt_bridge").attr("import_source")(source).attr(name.c_str());
}

// Triton's own run of a decorated kernel (triton_reference.decorated_run): the hash of the
// kernel it compiles, the configs it benchmarked and those its pruning kept. `fastest`, when
// set, names the config (by index) Triton's tuner is told ran fastest.
struct DecoratedRun {
  std::string hash;
  std::vector<std::string> benchmarked, kept;
};

inline DecoratedRun triton_decorated_run(const std::string& source, const std::string& name, const std::string& args,
                                         int fastest = -1, const std::string& target = "cuda:90") {
  namespace py = pybind11;
  const ReferenceGil gil;
  const py::object obj = decorated_object(source, name);
  const py::object ref = reference_module();
  ref.attr("forget_tuning")(obj);
  const py::object fastest_index = fastest >= 0 ? py::object(py::int_(fastest)) : py::object(py::none());
  const py::tuple result = ref.attr("decorated_run")(obj, python_args(args), target, fastest_index);
  return {result[0].attr("hash").cast<std::string>(), result[1].cast<std::vector<std::string>>(),
          result[2].cast<std::vector<std::string>>()};
}

}  // namespace tritonrt::test

// The pointer kind to the bridge: a tensor stand-in's address, dtype and, where the call knows
// it, shape, strides, device and extent. A tuning key holds the address as an integer.
#include "python_compiler/kinds/python_kinds.h"

namespace tritonrt::detail {
namespace {

py::tuple pointer_argument(const std::string& name, const KernelDescription&, const PythonArg& p) {
  const Arg& a = *p.value;
  py::object shape = py::none(), strides = py::none();
  int device = -1;
  std::size_t extent = a.source == ArgSource::address ? a.size : 0;
  if (p.shape != nullptr && p.shape->dims >= 0) {
    py::tuple sizes(p.shape->dims), steps(p.shape->dims);
    for (int d = 0; d < p.shape->dims; ++d) {
      sizes[d] = py::int_(p.shape->sizes[d]);
      steps[d] = py::int_(p.shape->strides[d]);
    }
    shape = sizes;
    strides = steps;
    device = p.shape->device;
    extent = p.shape->bytes;
  }
  return py::make_tuple(name, "pointer", py::int_(a.value.u), std::string(to_string(a.dtype)),
                        a.source == ArgSource::tensor ? "tensor" : "address", shape, strides, device, extent);
}

}  // namespace

const PythonKind kPointerPython{
    .constexpr_value = nullptr,
    .argument = pointer_argument,
    .key_value = [](const Arg& a) -> py::tuple { return py::make_tuple("int", py::int_(a.value.u)); },
};

}  // namespace tritonrt::detail

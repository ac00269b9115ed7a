// The tuple to the bridge: its elements, each converted by its own kind.
#include "python_compiler/kinds/python_kinds.h"

namespace tritonrt::detail {
namespace {

py::object tuple_constexpr(const Arg& a, const KernelDescription& kernel, std::size_t index) {
  const auto elements = a.elements();
  py::tuple values(elements.size());
  for (std::size_t i = 0; i < elements.size(); ++i) values[i] = constexpr_object(elements[i], kernel, index);
  return py::make_tuple("tuple", values);
}

// How many elements a tuple has at every depth.
std::size_t tuple_elements(const Arg& tuple) {
  std::size_t n = 0;
  for (const Arg& e : tuple.elements()) n += 1 + (e.kind == ArgKind::tuple ? tuple_elements(e) : 0);
  return n;
}

// Each element as an argument of its own, its shape (and a tuple's elements') in turn.
py::tuple tuple_argument(const std::string& name, const KernelDescription& kernel, const PythonArg& p) {
  const Arg& a = *p.value;
  py::tuple elements(a.value.u);
  const TensorShape* shape = p.element_shapes;
  std::size_t i = 0;
  for (const Arg& e : a.elements()) {
    const TensorShape* own = shape++;
    elements[i++] = python_arg(kernel, {p.param, &e, own->dims >= 0 ? own : nullptr, shape});
    if (e.kind == ArgKind::tuple) shape += tuple_elements(e);
  }
  return py::make_tuple(name, "tuple", elements);
}

}  // namespace

const PythonKind kTuplePython{
    .constexpr_value = tuple_constexpr,
    .argument = tuple_argument,
    .key_value = nullptr,
};

}  // namespace tritonrt::detail

// The tensor descriptor to the bridge: what a hook reads and sets of one (its block shape).
#include "python_compiler/kinds/python_kinds.h"

#include <span>

#include "tritonrt/tensor_descriptor.h"

namespace tritonrt::detail {
namespace {

py::tuple descriptor_argument(const std::string& name, const KernelDescription&, const PythonArg& p) {
  const Arg& a = *p.value;
  const auto& d = *static_cast<const TensorDescriptor*>(a.object);
  const auto ints = [](std::span<const std::int64_t> values) {
    py::list out;
    for (const std::int64_t v : values) out.append(py::int_(v));
    return out;
  };
  return py::make_tuple(name, "descriptor", py::int_(a.value.u), std::string(to_string(d.dtype())), ints(d.shape()),
                        ints(d.strides()), ints(d.block_shape()),
                        d.padding() == TensorDescriptor::Padding::nan ? "nan" : "zero");
}

}  // namespace

const PythonKind kDescriptorPython{
    .constexpr_value = nullptr,
    .argument = descriptor_argument,
    .key_value = nullptr,
};

}  // namespace tritonrt::detail

#include "python_compiler/kinds/python_kinds.h"

#include "common/errors.h"

namespace tritonrt::detail {

py::object constexpr_object(const Arg& a, const KernelDescription& kernel, std::size_t index) {
  const auto convert = python_kind(a.kind).constexpr_value;
  if (convert == nullptr) {
    raise<ArgumentError>(param_site(kernel.signature, index), "internal error: {} is not a constexpr value",
                         describe(a));
  }
  return convert(a, kernel, index);
}

py::tuple python_arg(const KernelDescription& kernel, const PythonArg& p) {
  const std::string& name = kernel.signature.params[p.param].name;
  const auto convert = python_kind(p.value->value_kind()).argument;
  return convert != nullptr ? convert(name, kernel, p) : py::make_tuple(name, "none", py::none());
}

py::list python_key(const std::vector<Arg>& key) {
  py::list out;
  for (const Arg& a : key) {
    const auto convert = python_kind(a.value_kind()).key_value;
    out.append(convert != nullptr ? convert(a) : py::make_tuple("none", py::none()));
  }
  return out;
}

}  // namespace tritonrt::detail

// The scalar kinds to the bridge: None, bools, integers, floats, strings, dtypes, a
// parameter's Python default. A fixed-type scalar goes as the number it holds; a value a
// decorator has yet to set, as None.
#include "python_compiler/kinds/python_kinds.h"

#include "common/errors.h"

namespace tritonrt::detail {
namespace {

py::object string_constexpr(const Arg& a, const KernelDescription& kernel, std::size_t index) {
  PyObject* text = PyUnicode_DecodeUTF8(a.value.s, static_cast<Py_ssize_t>(a.size), "strict");
  if (text == nullptr) {
    PyErr_Clear();
    raise<ArgumentError>(param_site(kernel.signature, index), "a constexpr string must be UTF-8 text");
  }
  return py::make_tuple("value", py::reinterpret_steal<py::str>(text));
}

}  // namespace

const PythonKind kNonePython{
    .constexpr_value = [](const Arg&, const KernelDescription&, std::size_t) -> py::object {
      return py::make_tuple("value", py::none());
    },
    .argument = nullptr,
    .key_value = nullptr,
};

const PythonKind kBooleanPython{
    .constexpr_value = [](const Arg& a, const KernelDescription&, std::size_t) -> py::object {
      return py::make_tuple("value", py::bool_(a.value.u != 0));
    },
    .argument = [](const std::string& name, const KernelDescription&, const PythonArg& p) -> py::tuple {
      return py::make_tuple(name, "bool", py::bool_(p.value->value.u != 0));
    },
    .key_value = [](const Arg& a) -> py::tuple { return py::make_tuple("bool", py::bool_(a.value.u != 0)); },
};

const PythonKind kSintPython{
    .constexpr_value = [](const Arg& a, const KernelDescription&, std::size_t) -> py::object {
      return py::make_tuple("value", py::int_(a.value.i));
    },
    .argument = [](const std::string& name, const KernelDescription&, const PythonArg& p) -> py::tuple {
      return py::make_tuple(name, "int", py::int_(p.value->value.i));
    },
    .key_value = [](const Arg& a) -> py::tuple { return py::make_tuple("int", py::int_(a.value.i)); },
};

const PythonKind kUintPython{
    .constexpr_value = [](const Arg& a, const KernelDescription&, std::size_t) -> py::object {
      return py::make_tuple("value", py::int_(a.value.u));
    },
    .argument = [](const std::string& name, const KernelDescription&, const PythonArg& p) -> py::tuple {
      return py::make_tuple(name, "int", py::int_(p.value->value.u));
    },
    .key_value = [](const Arg& a) -> py::tuple { return py::make_tuple("int", py::int_(a.value.u)); },
};

const PythonKind kRealPython{
    .constexpr_value = [](const Arg& a, const KernelDescription&, std::size_t) -> py::object {
      return py::make_tuple("value", py::float_(a.value.f));
    },
    .argument = [](const std::string& name, const KernelDescription&, const PythonArg& p) -> py::tuple {
      return py::make_tuple(name, "float", py::float_(p.value->value.f));
    },
    .key_value = [](const Arg& a) -> py::tuple { return py::make_tuple("float", py::float_(a.value.f)); },
};

const PythonKind kStringPython{
    .constexpr_value = string_constexpr,
    .argument = [](const std::string& name, const KernelDescription&, const PythonArg& p) -> py::tuple {
      return py::make_tuple(name, "str", py::bytes(p.value->value.s, p.value->size));
    },
    .key_value = [](const Arg& a) -> py::tuple { return py::make_tuple("str", py::bytes(a.value.s, a.size)); },
};

const PythonKind kTypedPython{.constexpr_value = nullptr, .argument = nullptr, .key_value = nullptr};

const PythonKind kDtypePython{
    .constexpr_value = [](const Arg& a, const KernelDescription&, std::size_t) -> py::object {
      return py::make_tuple("dtype", std::string(language_name(a.dtype)));
    },
    .argument = [](const std::string& name, const KernelDescription&, const PythonArg& p) -> py::tuple {
      return py::make_tuple(name, "dtype", std::string(language_name(p.value->dtype)));
    },
    .key_value = [](const Arg& a) -> py::tuple {
      return py::make_tuple("str", py::bytes(dtype_text(a.dtype, a.source)));
    },
};

const PythonKind kPythonDefaultPython{
    .constexpr_value = [](const Arg&, const KernelDescription&, std::size_t) -> py::object {
      return py::make_tuple("default");
    },
    .argument = [](const std::string& name, const KernelDescription&, const PythonArg&) -> py::tuple {
      return py::make_tuple(name, "default", py::none());
    },
    .key_value = nullptr,
};

const PythonKind kUnsetPython{.constexpr_value = nullptr, .argument = nullptr, .key_value = nullptr};

}  // namespace tritonrt::detail

// Python values as kernel arguments, the way Triton's binder types them: exact types checked
// first (None, bool, int, float), tensors through torch's C++ API when the torch support
// module is loaded, Triton's TensorDescriptor as a tritonrt::TensorDescriptor, anything with
// data_ptr() and dtype as a pointer, dtypes and strings as constexprs, tuples element by
// element. What is left (lists, named tuples, subclasses of the exact types) goes to
// Triton's own path.

#include "python_extension/frontend.h"

#include <cstring>

namespace tritonrt::frontend {
namespace {

DType* find_dtype(const std::vector<std::pair<PyObject*, DType>>& table, PyObject* object) {
  for (auto& [known, dtype] : table) {
    if (known == object) return const_cast<DType*>(&dtype);
  }
  return nullptr;
}

// A dtype object that is not one of the singletons: asked from Triton's canonical name.
bool dtype_by_name(PyObject* dtype_object, DType& out) {
  Ref name(PyObject_CallOneArg(state().canonical_dtype, dtype_object));
  if (!name || !PyUnicode_Check(name.get())) {
    PyErr_Clear();
    return false;
  }
  Py_ssize_t size = 0;
  const char* text = PyUnicode_AsUTF8AndSize(name.get(), &size);
  if (text == nullptr) {
    PyErr_Clear();
    return false;
  }
  const auto parsed = parse_dtype(std::string_view(text, static_cast<std::size_t>(size)));
  if (!parsed) return false;
  out = *parsed;
  return true;
}

// An object with data_ptr() (a tensor when torch's C++ API is not at hand, or any stand-in).
const char* pointer_arg(PyObject* object, Arg& arg) {
  State& s = state();
  if (s.tensor_type != nullptr && PyObject_TypeCheck(object, reinterpret_cast<PyTypeObject*>(s.tensor_type))) {
    Ref cuda(PyObject_GetAttr(object, s.s_is_cuda));
    if (cuda.get() != Py_True) {
      PyErr_Clear();
      return "a tensor that is not on a CUDA device";
    }
  }
  Ref address(PyObject_CallMethodNoArgs(object, s.s_data_ptr));
  Ref dtype(address ? PyObject_GetAttr(object, s.s_dtype) : nullptr);
  if (!dtype || !PyLong_Check(address.get())) {
    PyErr_Clear();
    return "an object whose data_ptr() or dtype cannot be read";
  }
  const DType* known = find_dtype(s.pointer_dtypes, dtype.get());
  if (known != nullptr) {
    arg.dtype = *known;
  } else if (!dtype_by_name(dtype.get(), arg.dtype)) {
    return "a pointer whose dtype Triton has no type for";
  }
  arg.value.u = PyLong_AsUnsignedLongLong(address.get());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return "a data_ptr() that is not an address";
  }
  arg.kind = ArgKind::pointer;
  return nullptr;
}

// object.name, or null where it has none, without the AttributeError PyObject_GetAttr makes
// (formatting its message costs more than the lookup); any other error is cleared too.
PyObject* optional_attr(PyObject* object, PyObject* name) {
  PyObject* value = nullptr;
#if PY_VERSION_HEX >= 0x030D0000
  if (PyObject_GetOptionalAttr(object, name, &value) < 0) PyErr_Clear();
#else
  if (_PyObject_LookupAttr(object, name, &value) < 0) PyErr_Clear();
#endif
  return value;
}

// Whether `descriptor` asks to round fp32 to tf32. The field, where a Triton has it (3.9), is a
// dataclass field with a default, so a class attribute: a type without one (Triton 3.6's) is
// not asked per descriptor (the lookup that fails costs about 450 instructions). The last
// type seen is kept, with its answer.
bool rounds_to_tf32(PyObject* descriptor) {
  State& s = state();
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(descriptor));
  if (type != s.tf32_checked_type) {
    Ref field(optional_attr(type, s.s_round_f32_to_tf32));
    Py_XSETREF(s.tf32_checked_type, Py_NewRef(type));
    s.tf32_field = field.get() != nullptr;
  }
  if (!s.tf32_field) return false;
  Ref tf32(optional_attr(descriptor, s.s_round_f32_to_tf32));
  const bool rounds = tf32 && PyObject_IsTrue(tf32.get()) != 0;
  PyErr_Clear();
  return rounds;
}

// Whether an int (exact or not) fits one digit, read directly from Python 3.12 on; false
// where it does not, or where this Python cannot tell.
bool compact_value(PyObject* integer, std::int64_t& out) {
#if PY_VERSION_HEX >= 0x030C0000
  if (PyUnstable_Long_IsCompact(reinterpret_cast<PyLongObject*>(integer))) {
    out = PyUnstable_Long_CompactValue(reinterpret_cast<PyLongObject*>(integer));
    return true;
  }
#else
  static_cast<void>(integer);
  static_cast<void>(out);
#endif
  return false;
}

// An int's value as PyLong_AsLongLong reads it (false with an error set where it has none);
// an exact int that fits one digit read directly.
bool small_integer(PyObject* object, std::int64_t& out) {
  if (PyLong_CheckExact(object) && compact_value(object, out)) return true;
  out = PyLong_AsLongLong(object);
  return !(out == -1 && PyErr_Occurred());
}

// Up to TensorDescriptor::kMaxRank integers of `object.<name>` (a list, tuple or torch.Size).
bool read_dims(PyObject* object, PyObject* name, std::int64_t* out, std::size_t& count) {
  Ref value(PyObject_GetAttr(object, name));
  Ref items(value ? PySequence_Fast(value.get(), "not a sequence") : nullptr);
  if (!items) {
    PyErr_Clear();
    return false;
  }
  const Py_ssize_t size = PySequence_Fast_GET_SIZE(items.get());
  if (size > TensorDescriptor::kMaxRank) return false;
  for (Py_ssize_t i = 0; i < size; ++i) {
    if (!small_integer(PySequence_Fast_GET_ITEM(items.get(), i), out[i])) {
      PyErr_Clear();
      return false;
    }
  }
  count = static_cast<std::size_t>(size);
  return true;
}

// The NVMMASharedLayout of a Gluon descriptor, for a descriptor of rank `rank`.
const char* gluon_layout(PyObject* object, std::size_t rank, NvmmaSharedLayout& out) {
  Ref layout(PyObject_GetAttr(object, state().s_layout));
  if (!layout || std::strcmp(Py_TYPE(layout.get())->tp_name, "NVMMASharedLayout") != 0) {
    PyErr_Clear();
    return "a Gluon tensor descriptor whose layout is not an NVMMASharedLayout";
  }
  long ints[3] = {0, 0, 0};
  int truths[3] = {0, 0, 0};
  const char* int_names[] = {"swizzle_byte_width", "element_bitwidth", "rank"};
  const char* truth_names[] = {"transposed", "fp4_padded"};
  for (int i = 0; i < 3; ++i) {
    Ref value(PyObject_GetAttrString(layout.get(), int_names[i]));
    ints[i] = value ? PyLong_AsLong(value.get()) : -1;
    // cga_layout: a Gluon without it has no CGA layouts (asked without making an AttributeError).
    Ref flag(i == 2 ? optional_attr(layout.get(), state().s_cga_layout)
                    : PyObject_GetAttrString(layout.get(), truth_names[i]));
    truths[i] = flag ? PyObject_IsTrue(flag.get()) : (i == 2 ? 0 : -1);
    if (PyErr_Occurred()) {
      PyErr_Clear();
      return "a Gluon tensor descriptor whose layout tritonrt cannot read";
    }
  }
  if (truths[2] != 0) return "a Gluon tensor descriptor whose layout spans several CTAs (cga_layout)";
  if (ints[2] != static_cast<long>(rank)) return "a Gluon tensor descriptor whose layout's rank is not its own";
  out.swizzle_byte_width = static_cast<int>(ints[0]);
  out.element_bitwidth = static_cast<int>(ints[1]);
  out.transposed = truths[0] != 0;
  out.fp4_padded = truths[1] != 0;
  return nullptr;
}

// Triton's TensorDescriptor (base, shape, strides, block_shape, padding), or Gluon's (and
// its layout), kept in `kept`.
const char* descriptor_arg(PyObject* object, bool gluon, Arg& arg, CallStorage& kept) {
  State& s = state();
  Ref base(PyObject_GetAttr(object, s.s_base));
  if (!base) {
    PyErr_Clear();
    return "a tensor descriptor without a base";
  }
  Arg pointer;
  const int tensor = s.torch != nullptr ? s.torch->tensor(base.get(), pointer) : 0;
  if (tensor < 0) return "a tensor descriptor over a tensor a launch cannot take";
  if (tensor == 0) {
    if (const char* problem = pointer_arg(base.get(), pointer)) return problem;
  }
  std::int64_t shape[TensorDescriptor::kMaxRank], strides[TensorDescriptor::kMaxRank],
      block[TensorDescriptor::kMaxRank];
  std::size_t ranks[3] = {0, 0, 0};
  if (!read_dims(object, s.s_shape, shape, ranks[0]) || !read_dims(object, s.s_strides, strides, ranks[1]) ||
      !read_dims(object, s.s_block_shape, block, ranks[2])) {
    return "a tensor descriptor whose shape, strides or block shape are not up to 5 integers";
  }
  Ref padding(PyObject_GetAttr(object, s.s_padding));
  if (!padding || !PyUnicode_Check(padding.get())) {
    PyErr_Clear();
    return "a tensor descriptor whose padding is not a string";
  }
  // The class's own "zero" and "nan" are the interned strings: compared by identity first.
  const bool nan = padding.get() == s.s_nan ||
                   (padding.get() != s.s_zero && PyUnicode_CompareWithASCIIString(padding.get(), "nan") == 0);
  // Triton 3.9's descriptors may round fp32 to tf32, which tritonrt's do not.
  if (rounds_to_tf32(object)) return "a tensor descriptor that rounds fp32 to tf32";
  NvmmaSharedLayout layout;
  if (gluon) {
    if (const char* problem = gluon_layout(object, ranks[0], layout)) return problem;
  }
  try {
    TensorDescriptor made =
        TensorDescriptor::make(reinterpret_cast<const void*>(pointer.value.u), pointer.dtype,
                               std::span(shape, ranks[0]), std::span(strides, ranks[1]), std::span(block, ranks[2]),
                               nan ? TensorDescriptor::Padding::nan : TensorDescriptor::Padding::zero);
    if (gluon) made.set_layout(layout);
    const TensorDescriptor* d = kept.add(made);
    if (d == nullptr) return "one more tensor descriptor than tritonrt passes in one call";
    ArgTraits<TensorDescriptor>::pack(arg, *d);
  } catch (const ArgumentError&) {
    return "a tensor descriptor tritonrt refuses (Triton says why)";
  }
  return nullptr;
}

// An exact int: signed where it fits 64 bits, else unsigned where it fits those.
const char* integer_arg(PyObject* object, Arg& arg) {
  if (compact_value(object, arg.value.i)) {
    arg.kind = ArgKind::sint;
    return nullptr;
  }
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(object, &overflow);
  if (overflow == 0) {
    arg.kind = ArgKind::sint;
    arg.value.i = value;
    return nullptr;
  }
  if (overflow > 0) {
    const unsigned long long big = PyLong_AsUnsignedLongLong(object);
    if (!PyErr_Occurred()) {
      arg.kind = ArgKind::uint;
      arg.value.u = big;
      return nullptr;
    }
    PyErr_Clear();
  }
  return "an integer outside the 64-bit range";
}

const char* string_arg(PyObject* object, Arg& arg) {
  Py_ssize_t size = 0;
  const char* text = PyUnicode_AsUTF8AndSize(object, &size);
  if (text == nullptr || std::strlen(text) != static_cast<std::size_t>(size)) {
    PyErr_Clear();
    return "a string tritonrt cannot pass as UTF-8";
  }
  arg.kind = ArgKind::string;
  arg.value.s = text;  // cached in the str object, which the caller keeps alive
  arg.size = static_cast<std::size_t>(size);
  return nullptr;
}

// An exact tuple: its elements as arguments of their own, in the call's storage (Triton
// flattens the tuple at launch).
const char* tuple_of_args(PyObject* object, Arg& arg, CallStorage& storage) {
  const std::size_t n = static_cast<std::size_t>(PyTuple_GET_SIZE(object));
  Arg* elements = storage.elements(n);
  if (elements == nullptr) return "a tuple beyond the 64 elements a call passes from Python";
  for (std::size_t i = 0; i < n; ++i) {
    if (const char* problem = to_arg(PyTuple_GET_ITEM(object, static_cast<Py_ssize_t>(i)), elements[i], &storage)) {
      return problem;
    }
  }
  arg = tuple_arg(std::span<const Arg>(elements, n));
  return nullptr;
}

}  // namespace

const char* to_arg(PyObject* object, Arg& arg, CallStorage* storage) {
  State& s = state();
  arg = Arg{};
  if (object == Py_None) {
    arg.kind = ArgKind::none;
    return nullptr;
  }
  PyTypeObject* type = Py_TYPE(object);
  if (type == &PyBool_Type) {
    arg.kind = ArgKind::boolean;
    arg.value.u = object == Py_True ? 1 : 0;
    return nullptr;
  }
  if (type == &PyLong_Type) return integer_arg(object, arg);
  if (type == &PyFloat_Type) {
    arg.kind = ArgKind::real;
    arg.value.f = PyFloat_AS_DOUBLE(object);
    return nullptr;
  }
  if (s.torch != nullptr) {
    const int tensor = s.torch->tensor(object, arg);
    if (tensor > 0) return nullptr;
    if (tensor < 0)
      return "a tensor that is not on a CUDA device, has no data pointer (sparse) or is of a dtype Triton has no type "
             "for";
  }
  if (type == &PyUnicode_Type) return string_arg(object, arg);
  if (const DType* dtype = find_dtype(s.constexpr_dtypes, object)) {
    arg.kind = ArgKind::dtype;
    arg.dtype = *dtype;
    return nullptr;
  }
  if (type == &PyTuple_Type) return storage != nullptr ? tuple_of_args(object, arg, *storage) : "a tuple as a default";
  if (type == &PyList_Type) return "a list";
  if (PyTuple_Check(object)) return "a named tuple (or another subclass of tuple)";
  for (PyObject* descriptor_type : {s.descriptor_type, s.gluon_descriptor_type}) {
    if (descriptor_type != nullptr && PyObject_TypeCheck(object, reinterpret_cast<PyTypeObject*>(descriptor_type))) {
      return storage != nullptr ? descriptor_arg(object, descriptor_type == s.gluon_descriptor_type, arg, *storage)
                                : "a tensor descriptor as a default";
    }
  }
  if (PyObject_HasAttr(object, s.s_data_ptr)) return pointer_arg(object, arg);
  return "a value of a type tritonrt does not pass";
}

PyObject* from_arg(const Arg& arg, PyObject* python_default) {
  switch (arg.value_kind()) {
    case ArgKind::none:
      Py_RETURN_NONE;
    case ArgKind::boolean:
      return PyBool_FromLong(arg.value.u != 0);
    case ArgKind::sint:
      return PyLong_FromLongLong(arg.value.i);
    case ArgKind::uint:
      return PyLong_FromUnsignedLongLong(arg.value.u);
    case ArgKind::real:
      return PyFloat_FromDouble(arg.value.f);
    case ArgKind::string:
      return PyUnicode_DecodeUTF8(arg.value.s, static_cast<Py_ssize_t>(arg.size), "surrogateescape");
    case ArgKind::dtype:
      if (PyObject* dtype = state().language_dtypes[static_cast<int>(arg.dtype)]) return Py_NewRef(dtype);
      break;
    case ArgKind::pointer:
      return PyLong_FromUnsignedLongLong(arg.value.u);
    case ArgKind::python_default:
      if (python_default != nullptr) return Py_NewRef(python_default);
      break;
    default:
      break;
  }
  PyErr_SetString(PyExc_RuntimeError, "tritonrt: a decorator's value has no Python form for grid(META)");
  return nullptr;
}

bool device_and_stream(int& device, void*& stream) {
  State& s = state();
  Ref active(PyObject_GetAttr(s.driver_config, s.s_private_active));
  if (!active || active.get() == Py_None) {
    PyErr_Clear();
    active = Ref(PyObject_GetAttr(s.driver_config, s.s_active));  // creates Triton's driver, as its run does
    if (!active) return false;
  }
  if (active.get() != s.checked_driver) {
    // A driver not seen before: torch's own (then its C++ API answers), or another one, asked.
    Ref is_torch(PyObject_CallOneArg(s.torch_check, active.get()));
    if (!is_torch) return false;
    Py_XSETREF(s.checked_driver, Py_NewRef(active.get()));
    s.driver_is_torch = is_torch.get() == Py_True && s.torch != nullptr;
    if (s.driver_is_torch) {
      // Once through Python: torch.cuda.current_device() initializes torch's CUDA state first.
      Ref initialized(PyObject_CallMethodNoArgs(active.get(), s.s_get_current_device));
      if (!initialized) return false;
    }
  }
  if (s.driver_is_torch) return s.torch->device_and_stream(device, stream);
  Ref device_object(PyObject_CallMethodNoArgs(active.get(), s.s_get_current_device));
  if (!device_object) return false;
  Ref stream_object(PyObject_CallMethodOneArg(active.get(), s.s_get_current_stream, device_object.get()));
  if (!stream_object) return false;
  device = static_cast<int>(PyLong_AsLong(device_object.get()));
  stream = PyLong_AsVoidPtr(stream_object.get());
  return !PyErr_Occurred();
}

}  // namespace tritonrt::frontend

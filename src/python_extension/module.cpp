// The extension module tritonrt._frontend: its types, and setup(), through which
// tritonrt/_wiring.py hands it the Python objects it reads on every call.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "python_extension/frontend.h"

namespace tritonrt::frontend {

State the_state;

namespace {

// Every object setup() keeps, by keyword; each is held for the life of the process.
struct Slot {
  const char* name;
  PyObject* State::*field;
};
constexpr Slot kSlots[] = {
    {"driver_config", &State::driver_config},
    {"runtime_dict", &State::runtime_dict},
    {"enter_hooks", &State::enter_hooks},
    {"exit_hooks", &State::exit_hooks},
    {"async_mode", &State::async_mode},
    {"runtime_check", &State::runtime_check},
    {"log_fallback", &State::log_fallback},
    {"make_result", &State::make_result},
    {"kernel_for", &State::kernel_for},
    {"base_kernel_for", &State::base_kernel_for},
    {"canonical_dtype", &State::canonical_dtype},
    {"grid_plan", &State::grid_plan},
    {"torch_check", &State::torch_check},
};

bool read_dtypes(PyObject* list, std::vector<std::pair<PyObject*, DType>>& out, bool language) {
  if (!PyList_Check(list)) {
    PyErr_SetString(PyExc_TypeError, "tritonrt: dtype tables are lists of (object, name)");
    return false;
  }
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); ++i) {
    PyObject *object, *name;
    if (!PyArg_ParseTuple(PyList_GET_ITEM(list, i), "OU", &object, &name)) return false;
    const char* text = PyUnicode_AsUTF8(name);
    if (text == nullptr) return false;
    const auto dtype = parse_dtype(text);
    if (!dtype) continue;  // a type this tritonrt does not know: Triton's path takes it
    out.emplace_back(Py_NewRef(object), *dtype);
    PyObject*& slot = state().language_dtypes[static_cast<int>(*dtype)];
    if (language && slot == nullptr) slot = Py_NewRef(object);
  }
  return true;
}

PyObject* setup(PyObject*, PyObject* args, PyObject* kwargs) {
  State& s = state();
  if (PyTuple_GET_SIZE(args) != 0 || kwargs == nullptr) {
    PyErr_SetString(PyExc_TypeError, "tritonrt._frontend.setup takes keyword arguments only");
    return nullptr;
  }
  for (const Slot& slot : kSlots) {
    PyObject* value = PyDict_GetItemString(kwargs, slot.name);
    if (value == nullptr) {
      PyErr_Format(PyExc_TypeError, "tritonrt._frontend.setup needs %s", slot.name);
      return nullptr;
    }
    Py_XSETREF(s.*slot.field, Py_NewRef(value));
  }
  PyObject* compiler_namespace = PyDict_GetItemString(kwargs, "compiler_namespace");
  Py_XSETREF(s.compiler_namespace, compiler_namespace != nullptr && PyDict_Check(compiler_namespace)
                                       ? Py_NewRef(compiler_namespace)
                                       : nullptr);
  PyObject* tensor_type = PyDict_GetItemString(kwargs, "tensor_type");
  Py_XSETREF(s.tensor_type, tensor_type != nullptr && tensor_type != Py_None ? Py_NewRef(tensor_type) : nullptr);
  for (auto [name, field] : {std::pair{"descriptor_type", &State::descriptor_type},
                             std::pair{"gluon_descriptor_type", &State::gluon_descriptor_type},
                             std::pair{"size_type", &State::size_type}}) {
    PyObject* type = PyDict_GetItemString(kwargs, name);
    Py_XSETREF(s.*field, type != nullptr && PyType_Check(type) ? Py_NewRef(type) : nullptr);
  }
  PyObject* torch_api = PyDict_GetItemString(kwargs, "torch_api");
  s.torch = nullptr;
  if (torch_api != nullptr && torch_api != Py_None) {
    const auto* api = static_cast<const TorchApi*>(PyCapsule_GetPointer(torch_api, "tritonrt._frontend_torch.api"));
    if (api == nullptr) return nullptr;
    if (api->version != TorchApi::kVersion) {
      PyErr_SetString(PyExc_ImportError, "tritonrt._frontend_torch is from another build of tritonrt");
      return nullptr;
    }
    s.torch = api;
  }
  Py_CLEAR(s.checked_driver);
  s.pointer_dtypes.clear();
  s.constexpr_dtypes.clear();
  PyObject* pointer_dtypes = PyDict_GetItemString(kwargs, "pointer_dtypes");
  PyObject* constexpr_dtypes = PyDict_GetItemString(kwargs, "constexpr_dtypes");
  if (pointer_dtypes == nullptr || constexpr_dtypes == nullptr) {
    PyErr_SetString(PyExc_TypeError, "tritonrt._frontend.setup needs pointer_dtypes and constexpr_dtypes");
    return nullptr;
  }
  if (!read_dtypes(constexpr_dtypes, s.constexpr_dtypes, true)) return nullptr;
  if (!read_dtypes(pointer_dtypes, s.pointer_dtypes, false)) return nullptr;
  Py_RETURN_NONE;
}

// A class's subscript slot set to launcher_subscript (Launcher, CompiledKernel: objects whose
// `_kernel` is the Kernel they bind a grid to). The class keeps its Python __getitem__,
// which torch.compile traces (Dynamo reads the class's dict, not its slots), which a subclass
// or a later assignment of __getitem__ puts back in the slot, and which the C subscript calls
// while torch is compiling.
PyObject* fast_subscript(PyObject*, PyObject* type_object) {
  if (!PyType_Check(type_object) ||
      !PyType_HasFeature(reinterpret_cast<PyTypeObject*>(type_object), Py_TPFLAGS_HEAPTYPE)) {
    PyErr_SetString(PyExc_TypeError, "tritonrt._frontend.fast_subscript takes a class defined in Python");
    return nullptr;
  }
  auto* type = reinterpret_cast<PyTypeObject*>(type_object);
  type->tp_as_mapping->mp_subscript = launcher_subscript;
  PyType_Modified(type);
  Py_RETURN_NONE;
}

// compiled_kernel_files(metadata_json, binary, binary_kind, cache_dir): the paths of the files
// Triton's CompiledKernel of that binary reads, (binary, metadata), which the core finds in the
// Triton cache entry it came from or writes beside its index; a RuntimeError where it cannot.
PyObject* compiled_kernel_files(PyObject*, PyObject* args) {
  const char *json, *binary, *kind, *cache_dir;
  Py_ssize_t json_size, binary_size, cache_dir_size;
  if (!PyArg_ParseTuple(args, "s#y#ss#", &json, &json_size, &binary, &binary_size, &kind, &cache_dir,
                        &cache_dir_size)) {
    return nullptr;
  }
  std::string files[2];
  try {
    Artifact artifact;
    artifact.metadata = KernelMetadata::parse(std::string_view(json, static_cast<std::size_t>(json_size)));
    artifact.binary.assign(binary, static_cast<std::size_t>(binary_size));
    artifact.binary_kind = kind;
    artifact.cache_dir.assign(cache_dir, static_cast<std::size_t>(cache_dir_size));
    const auto paths = state().core->compiled_kernel_files(artifact);
    if (paths.size() != 2) throw ArtifactError("tritonrt: the core gave no binary and metadata files");
    files[0] = paths[0].string();
    files[1] = paths[1].string();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
  // As os.fsdecode decodes a path: its bytes need not be UTF-8.
  Ref binary_path(PyUnicode_DecodeFSDefaultAndSize(files[0].data(), static_cast<Py_ssize_t>(files[0].size())));
  if (!binary_path) return nullptr;
  Ref metadata_path(PyUnicode_DecodeFSDefaultAndSize(files[1].data(), static_cast<Py_ssize_t>(files[1].size())));
  if (!metadata_path) return nullptr;
  return PyTuple_Pack(2, binary_path.get(), metadata_path.get());
}

PyObject* routed_getitem(PyObject*, PyObject* original) { return make_routed(&RoutedGetitemType, original); }
PyObject* routed_run(PyObject*, PyObject* original) { return make_routed(&RoutedRunType, original); }

PyMethodDef module_methods[] = {
    {"setup", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(setup)), METH_VARARGS | METH_KEYWORDS,
     "setup(**objects): the Python objects the launch path reads"},
    {"routed_run", routed_run, METH_O,
     "routed_run(run): the replacement of a kernel class's run (JITFunction, Autotuner, Heuristics) that install() "
     "sets, calling `run` where tritonrt leaves a kernel alone"},
    {"fast_subscript", fast_subscript, METH_O,
     "fast_subscript(cls): cls()[grid] in C through its _kernel, the class's __getitem__ kept for torch.compile"},
    {"compiled_kernel_files", compiled_kernel_files, METH_VARARGS,
     "compiled_kernel_files(metadata_json, binary, binary_kind, cache_dir): (binary path, metadata path) for "
     "Triton's CompiledKernel of that binary"},
    {"routed_getitem", routed_getitem, METH_O,
     "routed_getitem(getitem): the replacement of KernelInterface.__getitem__ that install() sets"},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "_frontend",
    "tritonrt's Python front end: Triton kernels launched through tritonrt (see tritonrt.launcher).",
    -1,
    module_methods,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
};

bool intern(PyObject*& slot, const char* text) {
  slot = PyUnicode_InternFromString(text);
  return slot != nullptr;
}

}  // namespace
}  // namespace tritonrt::frontend

PyMODINIT_FUNC PyInit__frontend() {
  using namespace tritonrt::frontend;
  State& s = state();
  s.core = tritonrt_front_end_api(tritonrt::detail::FrontEndApi::kVersion);
  if (s.core == nullptr) {
    PyErr_SetString(PyExc_ImportError,
                    "tritonrt._frontend: libtritonrt is of another version than this module (a mixed install)");
    return nullptr;
  }
  if (!intern(s.s_data_ptr, "data_ptr") || !intern(s.s_dtype, "dtype") || !intern(s.s_is_cuda, "is_cuda") ||
      !intern(s.s_grid, "grid") || !intern(s.s_warmup, "warmup") || !intern(s.s_active, "active") ||
      !intern(s.s_private_active, "_active") || !intern(s.s_get_current_device, "get_current_device") ||
      !intern(s.s_get_current_stream, "get_current_stream") || !intern(s.s_kernel_attr, "_tritonrt_kernel") ||
      !intern(s.s_base_kernel_attr, "_tritonrt_base_kernel") || !intern(s.s_run, "run") ||
      !intern(s.s_best_config, "best_config") || !intern(s.s_launcher_kernel, "_kernel") || !intern(s.s_getitem, "__getitem__") ||
      !intern(s.s_is_compiling_flag, "_is_compiling_flag") || !intern(s.s_base, "base") ||
      !intern(s.s_shape, "shape") || !intern(s.s_strides, "strides") || !intern(s.s_block_shape, "block_shape") ||
      !intern(s.s_padding, "padding") || !intern(s.s_round_f32_to_tf32, "round_f32_to_tf32") ||
      !intern(s.s_layout, "layout") || !intern(s.s_cga_layout, "cga_layout") || !intern(s.s_zero, "zero") ||
      !intern(s.s_nan, "nan")) {
    return nullptr;
  }
  for (PyTypeObject* type : {&KernelType, &BoundType, &RoutedRunType, &RoutedGetitemType}) {
    if (PyType_Ready(type) < 0) return nullptr;
  }
  PyObject* module = PyModule_Create(&module_def);
  if (module == nullptr) return nullptr;
  if (PyModule_AddObjectRef(module, "Kernel", reinterpret_cast<PyObject*>(&KernelType)) < 0 ||
      PyModule_AddObjectRef(module, "RoutedRun", reinterpret_cast<PyObject*>(&RoutedRunType)) < 0) {
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}

// tritonrt._frontend_torch: the front end's fast path for torch, built against one torch
// release (tritonrt/_wiring.py loads it only under that release). A tensor is read through
// torch's C++ API (no data_ptr() call), as the torch adapter passes it, so that heuristics
// and hooks see its shape; the device and stream are torch's, asked without Python.

#include <dlfcn.h>

#include <atomic>

#include <ATen/core/Tensor.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/autograd/python_variable.h>

#include "python_extension/frontend.h"
#include "tritonrt/torch.h"

namespace tritonrt::frontend {
namespace {

// A tensor is an instance of torch.Tensor or of a subclass, checked by type alone: torch's own
// THPVariable_Check asks isinstance(), which for anything else (a descriptor, a str, a dtype)
// calls the metaclass's __instancecheck__ (about a thousand instructions each) and would take
// an object whose __class__ merely names Tensor, which cannot be unpacked as one.
int tensor(PyObject* object, Arg& arg) {
  if (THPVariableClass == nullptr || !PyObject_TypeCheck(object, reinterpret_cast<PyTypeObject*>(THPVariableClass))) {
    return 0;
  }
  const at::Tensor& t = THPVariable_Unpack(object);
  if (!t.defined() || !t.is_cuda()) return -1;
  const auto dtype = torch::to_dtype(t.scalar_type());
  if (!dtype) return -1;
  try {
    arg.value.u = reinterpret_cast<std::uintptr_t>(t.data_ptr());
  } catch (const std::exception&) {
    // No data pointer (a sparse tensor has no storage): torch throws, which must not
    // cross the interpreter. Triton's path raises torch's error for it.
    return -1;
  }
  arg.kind = ArgKind::pointer;
  arg.dtype = *dtype;
  arg.source = ArgSource::tensor;
  arg.object = &t;  // lives in the Python object, which the caller holds through the launch
  return 1;
}

// The driver's cuCtxGetCurrent (libcuda is loaded by then: torch has initialized CUDA before
// the first launch), or nullptr.
using ContextGetter = int (*)(void** context);
ContextGetter context_getter() {
  static std::atomic<ContextGetter> found{nullptr};
  ContextGetter getter = found.load(std::memory_order_acquire);
  if (getter == nullptr) {
    if (void* library = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY)) {
      getter = reinterpret_cast<ContextGetter>(dlsym(library, "cuCtxGetCurrent"));
      found.store(getter, std::memory_order_release);
    }
  }
  return getter;
}

// torch's current device, c10::cuda::current_device(), kept per thread for the CUDA context
// current when it was asked: torch.cuda.set_device and torch.cuda.device make another
// context current, and asking the driver is about a tenth of asking torch (78 against 11 ns on
// an H100 host). The one case a context does not show, a switch c10 defers to a device with
// no context yet, names a device no tensor of the call can be on.
c10::DeviceIndex current_device() {
  thread_local void* known_context = nullptr;
  thread_local c10::DeviceIndex known_device = -1;
  void* context = nullptr;
  const ContextGetter getter = context_getter();
  if (getter != nullptr && getter(&context) == 0 && context != nullptr && context == known_context) {
    return known_device;
  }
  const c10::DeviceIndex index = c10::cuda::current_device();
  known_context = context;
  known_device = index;
  return index;
}

bool device_and_stream(int& device, void*& stream) {
  try {
    const c10::DeviceIndex index = current_device();
    device = index;
    stream = c10::cuda::getCurrentCUDAStream(index).stream();
    return true;
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return false;
  }
}

const TorchApi kApi{TorchApi::kVersion, &tensor, &device_and_stream};

PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "_frontend_torch",
    "tritonrt's front end reading torch tensors, device and stream through torch's C++ API.",
    -1,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
};

}  // namespace
}  // namespace tritonrt::frontend

PyMODINIT_FUNC PyInit__frontend_torch() {
  using namespace tritonrt::frontend;
  PyObject* module = PyModule_Create(&module_def);
  if (module == nullptr) return nullptr;
  PyObject* capsule = PyCapsule_New(const_cast<TorchApi*>(&kApi), "tritonrt._frontend_torch.api", nullptr);
  if (capsule == nullptr || PyModule_AddObject(module, "api", capsule) < 0) {
    Py_XDECREF(capsule);
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}

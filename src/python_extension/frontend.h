// The Python front end: Triton's calling convention (`kernel[grid](*args, **kwargs)`) over
// JitFunction's launch path, as the extension module tritonrt._frontend. Python objects become
// Args by type checks and C API reads; a call tritonrt cannot take goes to Triton's own path.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <string>
#include <utility>
#include <vector>

#include "function/front_end_abi.h"
#include "tritonrt/tritonrt.h"

namespace tritonrt::frontend {

/// What the torch support module (tritonrt._frontend_torch, built against one torch) lends
/// through its capsule: tensors read through torch's C++ API, and torch's device and stream.
struct TorchApi {
  static constexpr int kVersion = 1;
  int version = kVersion;
  /// 1: `object` is a CUDA tensor, written into `arg`; 0: not a tensor; -1: a tensor a launch
  /// cannot take (not on a CUDA device, or a dtype Triton has no type for).
  int (*tensor)(PyObject* object, Arg& arg) = nullptr;
  /// torch's current CUDA device and that device's current stream (torch.cuda.current_device(),
  /// torch._C._cuda_getCurrentRawStream); false with a Python exception set.
  bool (*device_and_stream)(int& device, void*& stream) = nullptr;
};

/// A new reference, released when it goes out of scope.
class Ref {
 public:
  Ref() = default;
  explicit Ref(PyObject* owned) : p_(owned) {}
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  Ref(Ref&& other) noexcept : p_(std::exchange(other.p_, nullptr)) {}
  Ref& operator=(Ref&& other) noexcept {
    Py_XSETREF(p_, std::exchange(other.p_, nullptr));
    return *this;
  }
  ~Ref() { Py_XDECREF(p_); }
  PyObject* get() const noexcept { return p_; }
  PyObject* release() noexcept { return std::exchange(p_, nullptr); }
  explicit operator bool() const noexcept { return p_ != nullptr; }

 private:
  PyObject* p_ = nullptr;
};

/// The module's Python objects, set once by setup() (tritonrt/_wiring.py passes them).
struct State {
  PyObject* driver_config = nullptr;   ///< triton.runtime.driver.driver
  PyObject* torch_check = nullptr;     ///< Python: whether a driver's device and stream are torch's
  PyObject* checked_driver = nullptr;  ///< the driver torch_check last answered for
  bool driver_is_torch = false;        ///< its answer (and the torch support module is loaded)
  PyObject* runtime_dict = nullptr;    ///< triton.knobs.runtime.__dict__: settings made at run time
  PyObject* enter_hooks = nullptr;     ///< the launch hook chains' lists of calls
  PyObject* exit_hooks = nullptr;
  PyObject* async_mode = nullptr;             ///< Triton's async-compile ContextVar
  PyObject* runtime_check = nullptr;          ///< Python: why runtime settings keep tritonrt out, or None
  PyObject* log_fallback = nullptr;           ///< Python: log_fallback(kernel, reason)
  PyObject* make_result = nullptr;            ///< Python: (what a launch returns, its tuners' configs) for an artifact
  PyObject* kernel_for = nullptr;             ///< Python: the Kernel of a JITFunction (install())
  PyObject* base_kernel_for = nullptr;        ///< Python: the Kernel of a decorator entered by super().run
  PyObject* canonical_dtype = nullptr;        ///< Python: Triton's name of a dtype object, or None
  PyObject* grid_plan = nullptr;              ///< Python: what a grid function reads, or None (_grids.plan)
  PyObject* tensor_type = nullptr;            ///< torch.Tensor, when torch is imported
  PyObject* size_type = nullptr;              ///< torch.Size, when torch is imported
  PyObject* descriptor_type = nullptr;        ///< triton.tools.tensor_descriptor.TensorDescriptor
  PyObject* gluon_descriptor_type = nullptr;  ///< triton.experimental.gluon.nvidia.hopper.TensorDescriptor
  PyObject* compiler_namespace = nullptr;     ///< vars(torch.compiler), whose _is_compiling_flag is_compiling() reads
  PyObject* tf32_checked_type = nullptr;      ///< the descriptor type rounds_to_tf32 last asked about
  bool tf32_field = false;                    ///< whether that type has a round_f32_to_tf32 field
  const TorchApi* torch = nullptr;
  const detail::FrontEndApi* core = nullptr;  ///< the core's contract with this module, checked at import
  /// dtype objects by identity: torch's and triton.language's for pointers, the latter as constexprs.
  std::vector<std::pair<PyObject*, DType>> pointer_dtypes, constexpr_dtypes;
  PyObject* language_dtypes[kDTypeCount] = {};  ///< triton.language's object of each type
  // Interned names.
  PyObject *s_data_ptr, *s_dtype, *s_is_cuda, *s_grid, *s_warmup, *s_active, *s_private_active;
  PyObject *s_get_current_device, *s_get_current_stream, *s_kernel_attr, *s_best_config;
  PyObject *s_launcher_kernel, *s_getitem, *s_is_compiling_flag, *s_base_kernel_attr, *s_run;
  PyObject *s_base, *s_shape, *s_strides, *s_block_shape, *s_padding, *s_round_f32_to_tf32, *s_layout, *s_cga_layout;
  PyObject *s_zero, *s_nan;
};
/// The module's one State, made when the module's library is loaded: read for every argument,
/// so not behind a function-local static's guard.
extern State the_state;
inline State& state() { return the_state; }

/// A type object with every slot empty, to fill in before PyType_Ready.
inline PyTypeObject blank_type() {
  PyTypeObject t;
  std::memset(static_cast<void*>(&t), 0, sizeof t);
  Py_SET_REFCNT(reinterpret_cast<PyObject*>(&t), 1);
  return t;
}

/// What one call's arguments point at, living as long as the call: the tensor descriptors made
/// from Triton's TensorDescriptor objects, and the elements of its tuples.
class CallStorage {
 public:
  static constexpr std::size_t kMaxDescriptors = 16;
  static constexpr std::size_t kMaxElements = 64;
  /// A copy of `d` that lives as long as this; nullptr when all kMaxDescriptors are taken.
  const TensorDescriptor* add(const TensorDescriptor& d) {
    if (descriptor_count_ == kMaxDescriptors) return nullptr;
    return std::construct_at(reinterpret_cast<TensorDescriptor*>(descriptors_) + descriptor_count_++, d);
  }
  /// Room for a tuple's `n` elements; nullptr when fewer than `n` of kMaxElements are left.
  Arg* elements(std::size_t n) {
    if (n > kMaxElements - element_count_) return nullptr;
    Arg* out = reinterpret_cast<Arg*>(elements_) + element_count_;
    element_count_ += n;
    return out;
  }

 private:
  // Raw storage: nothing is written for a call that uses none (both trivially destructible).
  alignas(TensorDescriptor) std::byte descriptors_[sizeof(TensorDescriptor) * kMaxDescriptors];
  alignas(Arg) std::byte elements_[sizeof(Arg) * kMaxElements];
  std::size_t descriptor_count_ = 0;
  std::size_t element_count_ = 0;
};
static_assert(std::is_trivially_destructible_v<TensorDescriptor> && std::is_trivially_copyable_v<Arg>);

/// Why a value cannot be an Arg (tritonrt leaves the call to Triton), or nullptr when it is.
/// No Python exception is left set either way. A TensorDescriptor and a tuple's elements are
/// kept in `storage` (a default value has none: then they cannot be passed).
const char* to_arg(PyObject* object, Arg& arg, CallStorage* storage = nullptr);
/// A constexpr value for grid(META) from what a decorator or default gave; a new reference.
PyObject* from_arg(const Arg& arg, PyObject* python_default);

/// torch's (or the active Triton driver's) current device and stream; false with an exception.
bool device_and_stream(int& device, void*& stream);

/// What a keyword of a call stands for.
enum : int { kUnknownKeyword = -1, kGridKeyword = -2, kWarmupKeyword = -3, kFirstOption = -100 };

struct KernelObject;
extern PyTypeObject KernelType, BoundType, RoutedRunType, RoutedGetitemType;
/// The replacement of a kernel class's run (RoutedRunType) or KernelInterface.__getitem__
/// (RoutedGetitemType), standing in for `original`.
PyObject* make_routed(PyTypeObject* type, PyObject* original);
/// The subscript in C of tritonrt.Launcher and CompiledKernel (obj[grid] binds obj._kernel to
/// the grid without running the class's Python __getitem__, which it calls while torch compiles
/// and where obj has no _kernel).
PyObject* launcher_subscript(PyObject* self, PyObject* grid);

}  // namespace tritonrt::frontend

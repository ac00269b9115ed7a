// The torch adapter (CMake target tritonrt::torch): at::Tensor, c10::Scalar and
// c10::ScalarType as kernel arguments, and launches on the current CUDA stream of the
// tensors' device. The core never includes this header.
//
//     auto& add = tritonrt::JitFunction::get("kernels/add.py", "add_kernel");
//     at::Tensor out = at::empty_like(x);
//     tritonrt::torch::launch(add, {.grid = {tritonrt::cdiv(x.numel(), 1024)}}, x, y, out, x.numel(), 1024);
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>
#include <c10/core/ScalarType.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "tritonrt/tritonrt.h"

namespace tritonrt::torch {

/// Triton's element type for a torch dtype, e.g. `to_dtype(at::kHalf) == DType::fp16`;
/// std::nullopt where Triton has none (complex, quantized, sub-byte, float8_e8m0fnu, fp4).
constexpr std::optional<DType> to_dtype(c10::ScalarType type) noexcept {
  using S = c10::ScalarType;
  switch (type) {
    case S::Bool:
      return DType::u1;
    case S::Char:
      return DType::i8;
    case S::Short:
      return DType::i16;
    case S::Int:
      return DType::i32;
    case S::Long:
      return DType::i64;
    case S::Byte:
      return DType::u8;
    case S::UInt16:
      return DType::u16;
    case S::UInt32:
      return DType::u32;
    case S::UInt64:
      return DType::u64;
    case S::Half:
      return DType::fp16;
    case S::BFloat16:
      return DType::bf16;
    case S::Float:
      return DType::fp32;
    case S::Double:
      return DType::fp64;
    // Triton's own names for torch's fp8 types (triton._utils.type_canonicalisation_dict).
    case S::Float8_e4m3fn:
      return DType::fp8e4nv;
    case S::Float8_e5m2:
      return DType::fp8e5;
    case S::Float8_e4m3fnuz:
      return DType::fp8e4b8;
    case S::Float8_e5m2fnuz:
      return DType::fp8e5b16;
    default:
      return std::nullopt;
  }
}

/// Checks the tensor arguments of one call before it launches, in order, and remembers
/// their device. Every failure is an ArgumentError naming the caller and the parameter:
///
///     tritonrt::torch::TensorChecks checks("tritonrt::add");
///     checks.required(self, "self").required(other, "other");   // then checks.device()
///
/// A required tensor must be defined, on a CUDA device, of a dtype Triton takes, and on the
/// same device as the tensors checked before it; an optional one only when it holds one.
class TensorChecks {
 public:
  /// `op` names an operator ("tritonrt::add"); its parameters are called "argument 'x'".
  explicit TensorChecks(std::string_view op) noexcept : owner_(op) {}
  /// For the parameters of a kernel: "tritonrt: kernel 'add_kernel', parameter 'x_ptr': ...".
  static TensorChecks for_kernel(const JitFunction& fn) noexcept { return TensorChecks(fn.signature().name, true); }

  TensorChecks& required(const at::Tensor& tensor, std::string_view param);
  TensorChecks& optional(const std::optional<at::Tensor>& tensor, std::string_view param) {
    if (tensor.has_value() && tensor->defined()) required(*tensor, param);
    return *this;
  }
  /// The device index of the checked tensors, or -1 when none was checked.
  c10::DeviceIndex device() const noexcept { return device_; }

 private:
  TensorChecks(std::string_view owner, bool kernel) noexcept : owner_(owner), kernel_(kernel) {}
  [[noreturn]] void fail(std::string_view param, const std::string& problem) const;

  std::string_view owner_;
  bool kernel_ = false;
  c10::DeviceIndex device_ = -1;
};

/// The Triton type of a torch dtype; throws ArgumentError naming `owner` and `param` where
/// Triton has none.
DType checked_dtype(c10::ScalarType type, std::string_view owner, std::string_view param);

/// Makes a CUDA device current for its lifetime and then restores the one before, as
/// c10::cuda::CUDAGuard does; when the device is current already (the usual case) it costs
/// one cudaGetDevice and restores nothing. An operator opens one for the tensors' device
/// around its output allocations (torch's caching allocator serves the current device) and
/// passes it to its launches, which then look nothing up again:
///
///     const tritonrt::torch::DeviceScope scope(checks.device());
///     at::Tensor out = at::empty(sizes, self.options());
///     tritonrt::torch::launch(scope, kernel, {.grid = grid}, self, out, n, 1024);
class DeviceScope {
 public:
  explicit DeviceScope(c10::DeviceIndex device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  c10::DeviceIndex device() const noexcept { return device_; }

 private:
  c10::DeviceIndex device_;
  c10::DeviceIndex previous_ = -1;  // the device to restore, -1 when none was changed
};

/// A tensor descriptor of `t` (its data, sizes, strides and dtype), loaded `block_shape` at a
/// time: Triton's `TensorDescriptor.from_tensor`. Checked as TensorDescriptor::make checks,
/// and `t` must be a defined CUDA tensor; it must outlive the launches the descriptor is
/// passed to.
TensorDescriptor descriptor(const at::Tensor& t, std::span<const std::int64_t> block_shape,
                            TensorDescriptor::Padding padding = TensorDescriptor::Padding::zero);

namespace detail {

[[noreturn]] void throw_undefined_tensor();
[[noreturn]] void throw_unsupported_dtype(c10::ScalarType type);
[[noreturn]] void throw_unsupported_scalar(const c10::Scalar& value);

inline DType tensor_dtype(const at::Tensor& t) {
  if (!t.defined()) [[unlikely]]
    throw_undefined_tensor();
  const auto dtype = to_dtype(t.scalar_type());
  if (!dtype) [[unlikely]]
    throw_unsupported_dtype(t.scalar_type());
  return *dtype;
}

inline std::string_view param_name(const JitFunction& fn, std::size_t index) noexcept {
  const auto& params = fn.signature().params;
  return index < params.size() ? std::string_view(params[index].name) : std::string_view("?");
}

template <class T>
void check_launch_arg(TensorChecks& checks, const JitFunction& fn, std::size_t index, const T& arg) {
  if constexpr (std::is_same_v<T, at::Tensor>) {
    checks.required(arg, param_name(fn, index));
  } else if constexpr (std::is_same_v<T, std::optional<at::Tensor>>) {
    checks.optional(arg, param_name(fn, index));
  } else if constexpr (tritonrt::detail::IsTuple<T>::value) {
    // The tensors of a tuple are checked as the parameter's own.
    std::apply([&](const auto&... e) { (check_launch_arg(checks, fn, index, e), ...); }, arg);
  }
}

/// Makes the device current for the launch, picks torch's current stream unless one was
/// given, launches.
void launch_on_device(JitFunction& fn, LaunchConfig& config, c10::DeviceIndex device, std::span<const Arg> args);

/// The same under the caller's scope: `device` (the tensors', -1 for none) must be its device.
void launch_in_scope(JitFunction& fn, LaunchConfig& config, const DeviceScope& scope, c10::DeviceIndex device,
                     std::span<const Arg> args);

template <class... Args>
TensorChecks check_launch_args(const JitFunction& fn, const Args&... args) {
  auto checks = TensorChecks::for_kernel(fn);
  std::size_t index = 0;
  (check_launch_arg(checks, fn, index++, args), ...);
  return checks;
}

}  // namespace detail

/// Launches `fn` on tensors: checks every tensor argument (see TensorChecks; errors name the
/// kernel and parameter), then runs with the tensors' device current (a DeviceScope) on that
/// device's current CUDA stream, as torch's own kernels do. A `config.stream` other than
/// nullptr is used as given. Kernel scratch memory comes from torch's caching allocator.
/// Tensor descriptors are not tensors here: a call whose only memory arguments are descriptors
/// runs on the current device, as Triton's does (make them with `descriptor` from tensors of it).
template <class... Args>
void launch(JitFunction& fn, LaunchConfig config, const Args&... args) {
  const auto checks = detail::check_launch_args(fn, args...);
  const PackedArgs<Args...> packed(args...);
  detail::launch_on_device(fn, config, checks.device(), packed);
}

/// Launches as above inside an operator that holds a DeviceScope already (it opened one to
/// allocate its outputs): the tensors must be on `scope.device()`, an ArgumentError
/// otherwise, and the current device is not looked up again.
template <class... Args>
void launch(const DeviceScope& scope, JitFunction& fn, LaunchConfig config, const Args&... args) {
  const auto checks = detail::check_launch_args(fn, args...);
  const PackedArgs<Args...> packed(args...);
  detail::launch_in_scope(fn, config, scope, checks.device(), packed);
}

}  // namespace tritonrt::torch

namespace tritonrt {

/// A tensor passes its data pointer typed by its dtype, as Triton's `kernel[grid](t)` does;
/// the Python code around a kernel (heuristics, hooks) sees its dtype, shape and strides.
/// Undefined tensors and dtypes Triton has no type for are ArgumentErrors.
template <>
struct ArgTraits<at::Tensor> {
  static void pack(Arg& a, const at::Tensor& t) {
    a.dtype = torch::detail::tensor_dtype(t);
    a.kind = ArgKind::pointer;
    a.value.u = reinterpret_cast<std::uintptr_t>(t.data_ptr());
    a.source = ArgSource::tensor;
    a.object = &t;
  }
};

/// An empty optional, or one holding an undefined tensor, is None.
template <>
struct ArgTraits<std::optional<at::Tensor>> {
  static void pack(Arg& a, const std::optional<at::Tensor>& t) {
    if (t.has_value() && t->defined()) {
      ArgTraits<at::Tensor>::pack(a, *t);
    } else {
      a.kind = ArgKind::none;
    }
  }
};

/// A scalar passes its value as the Python number would: bool, int (typed by value), float.
/// Complex and symbolic scalars are ArgumentErrors.
template <>
struct ArgTraits<c10::Scalar> {
  static void pack(Arg& a, const c10::Scalar& s) {
    if (s.isSymbolic()) [[unlikely]]
      torch::detail::throw_unsupported_scalar(s);
    if (s.isBoolean()) {
      a.kind = ArgKind::boolean;
      a.value.u = s.toBool() ? 1 : 0;
    } else if (s.isFloatingPoint()) {
      a.kind = ArgKind::real;
      a.value.f = s.toDouble();
    } else if (s.isIntegral(false)) {
      // Only values above INT64_MAX are held unsigned; Triton types them u64.
      if (s.isUnsigned() && s.toUInt64() > static_cast<std::uint64_t>(INT64_MAX)) {
        a.kind = ArgKind::uint;
        a.value.u = s.toUInt64();
      } else {
        a.kind = ArgKind::sint;
        a.value.i = s.toLong();
      }
    } else {
      torch::detail::throw_unsupported_scalar(s);
    }
  }
};

/// A torch dtype is a constexpr Triton dtype: `at::kHalf` arrives as `tl.float16`.
template <>
struct ArgTraits<c10::ScalarType> {
  static void pack(Arg& a, c10::ScalarType type) {
    const auto dtype = torch::to_dtype(type);
    if (!dtype) [[unlikely]]
      torch::detail::throw_unsupported_dtype(type);
    a.kind = ArgKind::dtype;
    a.dtype = *dtype;
  }
};

}  // namespace tritonrt

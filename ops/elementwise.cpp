// add and axpy: out = a + alpha * b, with broadcasting and aten's type promotion.

#include <ATen/ExpandUtils.h>
#include <ATen/ops/result_type_native.h>

#include "ops.h"
#include "support.h"

namespace tritonrt::ops {
namespace {

using at::ScalarType;
using torch::TensorChecks;

constexpr std::int64_t kElementwiseBlock = 1024;

// aten's checks of alpha against the result dtype (alpha_check, and the conversion
// `alpha.to<opmath_t>()` that rejects values the type cannot hold).
void check_alpha(ScalarType result, const c10::Scalar& alpha, const char* op) {
  if (alpha.isComplex()) fail(op, "complex alpha is not supported");
  if (alpha.isBoolean() && result != ScalarType::Bool) fail(op, "boolean alpha only supported for Boolean results");
  if (!c10::isFloatingType(result) && !alpha.isIntegral(true)) {
    fail(op, "for integral input tensors, argument alpha must not be a floating point number");
  }
  switch (result) {
    case ScalarType::Char:
      (void)alpha.toChar();
      break;
    case ScalarType::Short:
      (void)alpha.toShort();
      break;
    case ScalarType::Int:
      (void)alpha.toInt();
      break;
    case ScalarType::Byte:
      (void)alpha.toByte();
      break;
    case ScalarType::UInt16:
      (void)alpha.toUInt16();
      break;
    case ScalarType::UInt32:
      (void)alpha.toUInt32();
      break;
    case ScalarType::Double:
      break;
    default:
      if (c10::isFloatingType(result)) (void)alpha.toFloat();
      break;
  }
}

// Alpha typed as the kernel computes: fp32 / fp64, or an int64 carrying the value's bits.
TypedScalar alpha_arg(DType compute, const c10::Scalar& alpha) {
  if (compute != DType::i64) return scalar(compute, alpha.toDouble());
  if (alpha.isBoolean()) return scalar(compute, std::int64_t{alpha.toBool() ? 1 : 0});
  if (alpha.isUnsigned()) return scalar(compute, static_cast<std::int64_t>(alpha.toUInt64()));
  return scalar(compute, alpha.toLong());
}

// aten's type promotion of two tensors. Equal dtypes promote to themselves unless both are
// wrapped Python numbers (those take the default dtype): that common case skips building
// aten's promotion state (about 20 ns). Otherwise at::result_type's own kernel, called without a
// trip through the dispatcher.
ScalarType promoted(const at::Tensor& a, const at::Tensor& b) {
  if (a.scalar_type() == b.scalar_type() && !a.unsafeGetTensorImpl()->is_wrapped_number()) return a.scalar_type();
  return at::native::result_type(a, b);
}

// The result dtype of a + alpha * b with aten's promotion; `a` may be absent (axpy's y).
ScalarType binary_result(const at::Tensor* a, const char* a_name, const at::Tensor& b, const char* b_name,
                         const c10::Scalar& alpha, const char* op) {
  if (a != nullptr) check_input(a->scalar_type(), op, a_name);
  check_input(b.scalar_type(), op, b_name);
  const ScalarType result = a != nullptr ? promoted(*a, b) : b.scalar_type();
  check_result(result, op);
  check_alpha(result, alpha, op);
  return result;
}

const at::Tensor* get(const at::Tensor& t) { return &t; }
const at::Tensor* get(const std::optional<at::Tensor>& t) { return t.has_value() && t->defined() ? &*t : nullptr; }

// a + alpha * b on CUDA; A is at::Tensor (add's self) or std::optional<at::Tensor> (axpy's y).
template <class A>
at::Tensor binary_cuda(const char* op, const A& a_arg, const char* a_name, const at::Tensor& b, const char* b_name,
                       const c10::Scalar& alpha) {
  const at::Tensor* a = get(a_arg);
  TensorChecks checks(op);
  if (a != nullptr) checks.required(*a, a_name);
  checks.required(b, b_name);
  const ScalarType result = binary_result(a, a_name, b, b_name, alpha, op);
  const bool same_shape = a == nullptr || a->sizes().equals(b.sizes());
  const c10::DimVector shape = same_shape ? c10::DimVector(b.sizes()) : at::infer_size_dimvector(a->sizes(), b.sizes());
  const torch::DeviceScope scope(checks.device());
  at::Tensor out = new_cuda_tensor(scope, shape, result);
  const std::int64_t n = out.numel();
  if (n == 0) return out;
  const DType compute = compute_dtype(result);
  const TypedScalar alpha_value = alpha_arg(compute, alpha);
  const Grid grid{cdiv(n, kElementwiseBlock)};
  static JitFunction& flat = kernel(kElementwise, "add_kernel");

  if (same_shape && b.is_contiguous() && (a == nullptr || a->is_contiguous())) {
    torch::launch(scope, flat, {.grid = grid}, a_arg, b, out, alpha_value, n, kElementwiseBlock, compute);
    return out;
  }
  ElementwiseLayout layout;
  const Operand b_operand{dims(b.sizes()), dims(b.strides())};
  const Operand a_operand = a != nullptr ? Operand{dims(a->sizes()), dims(a->strides())} : Operand{};
  if (!collapse(dims(shape), a != nullptr ? &a_operand : nullptr, b_operand, layout)) {
    // More than kMaxDims uneven dims: read contiguous copies instead.
    const at::Tensor b_dense = b.expand(shape).contiguous();
    const std::optional<at::Tensor> a_dense =
        a != nullptr ? std::optional<at::Tensor>(a->expand(shape).contiguous()) : std::nullopt;
    torch::launch(scope, flat, {.grid = grid}, a_dense, b_dense, out, alpha_value, n, kElementwiseBlock, compute);
    return out;
  }
  const auto& sa = layout.strides[0];
  const auto& sb = layout.strides[1];
  if (layout.ndim <= 1 && (a == nullptr || sa[kMaxDims - 1] == 1) && sb[kMaxDims - 1] == 1) {
    torch::launch(scope, flat, {.grid = grid}, a_arg, b, out, alpha_value, n, kElementwiseBlock, compute);
    return out;
  }
  static JitFunction& strided = kernel(kElementwise, "add_strided_kernel");
  const auto& size = layout.sizes;
  torch::launch(scope, strided, {.grid = grid}, a_arg, b, out, alpha_value, n, size[1], size[2], size[3], sa[0], sa[1],
                sa[2], sa[3], sb[0], sb[1], sb[2], sb[3], kElementwiseBlock, compute);
  return out;
}

at::Tensor binary_meta(const char* op, const at::Tensor* a, const char* a_name, const at::Tensor& b, const char* b_name,
                       const c10::Scalar& alpha) {
  check_meta_devices(op, {{a, a_name}, {&b, b_name}});
  const ScalarType result = binary_result(a, a_name, b, b_name, alpha, op);
  if (a == nullptr) return new_meta_tensor(b.sym_sizes(), result);
  return new_meta_tensor(at::infer_size_symdimvector(a->sym_sizes(), b.sym_sizes()), result);
}

}  // namespace

at::Tensor add_cuda(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  return binary_cuda(op_names::add, self, "self", other, "other", alpha);
}

at::Tensor add_meta(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  return binary_meta(op_names::add, &self, "self", other, "other", alpha);
}

// axpy(x, y, alpha) is add(y, x, alpha=alpha); without y it is alpha * x in x's dtype.
at::Tensor axpy_cuda(const at::Tensor& x, const std::optional<at::Tensor>& y, const std::optional<c10::Scalar>& alpha) {
  return binary_cuda(op_names::axpy, y, "y", x, "x", alpha.value_or(c10::Scalar(1)));
}

at::Tensor axpy_meta(const at::Tensor& x, const std::optional<at::Tensor>& y, const std::optional<c10::Scalar>& alpha) {
  return binary_meta(op_names::axpy, get(y), "y", x, "x", alpha.value_or(c10::Scalar(1)));
}

}  // namespace tritonrt::ops

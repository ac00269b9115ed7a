// tritonrt's operator library: Triton kernels (kernels/*.py) behind TORCH_LIBRARY operators
// with aten's semantics. Loading this library (torch.ops.load_library, or `import
// tritonrt.ops`) registers torch.ops.tritonrt.*; C++ calls them through the dispatcher.
//
// Every operator returns a new contiguous tensor; inputs of any strides are read in place
// (through strides, or a contiguous copy where the kernel needs one). CUDA tensors only:
// a call with CPU tensors fails naming the argument. Meta kernels give torch.compile the
// output's shape and dtype, with symbolic sizes where the operator's arguments allow.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <optional>

#include "tritonrt/torch.h"

/// The operators, once each: name and schema. Each NAME has NAME_cuda and NAME_meta below;
/// registration.cpp registers every entry for CUDA, Meta, Autograd and CPU from this list.
#define TRITONRT_OPS(X)                                                                        \
  X(add, "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")                        \
  X(sum, "sum(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor") \
  X(softmax, "softmax(Tensor self, int dim=-1) -> Tensor")                                     \
  X(axpy, "axpy(Tensor x, Tensor? y=None, Scalar? alpha=None) -> Tensor")                      \
  X(layer_norm,                                                                                \
    "layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, "                   \
    "Tensor? bias=None, float eps=1e-05) -> Tensor")                                           \
  X(matmul, "matmul(Tensor a, Tensor b) -> Tensor")

namespace tritonrt::ops {

/// Each operator's qualified name, as the dispatcher and the error messages spell it.
namespace op_names {
#define TRITONRT_OP_NAME(name, schema) inline constexpr char name[] = "tritonrt::" #name;
TRITONRT_OPS(TRITONRT_OP_NAME)
#undef TRITONRT_OP_NAME
}  // namespace op_names

at::Tensor add_cuda(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha);
at::Tensor add_meta(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha);
at::Tensor axpy_cuda(const at::Tensor& x, const std::optional<at::Tensor>& y, const std::optional<c10::Scalar>& alpha);
at::Tensor axpy_meta(const at::Tensor& x, const std::optional<at::Tensor>& y, const std::optional<c10::Scalar>& alpha);
at::Tensor sum_cuda(const at::Tensor& self, std::int64_t dim, bool keepdim, std::optional<c10::ScalarType> dtype);
at::Tensor sum_meta(const at::Tensor& self, std::int64_t dim, bool keepdim, std::optional<c10::ScalarType> dtype);
at::Tensor softmax_cuda(const at::Tensor& self, std::int64_t dim);
at::Tensor softmax_meta(const at::Tensor& self, std::int64_t dim);
at::Tensor layer_norm_cuda(const at::Tensor& input, at::IntArrayRef normalized_shape,
                           const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias, double eps);
at::Tensor layer_norm_meta(const at::Tensor& input, at::IntArrayRef normalized_shape,
                           const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias, double eps);
at::Tensor matmul_cuda(const at::Tensor& a, const at::Tensor& b);
at::Tensor matmul_meta(const at::Tensor& a, const at::Tensor& b);

}  // namespace tritonrt::ops

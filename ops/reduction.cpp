// sum and softmax: reductions along one dim of a tensor of any strides.

#include <c10/core/WrapDimMinimal.h>
#include <c10/util/MaybeOwned.h>

#include "ops.h"
#include "support.h"

namespace tritonrt::ops {
namespace {

using at::ScalarType;
using torch::TensorChecks;

// The tensor the kernel reads, `t` itself or a contiguous copy when its layout has no
// (outer, R, inner) view, and the plan for it.
c10::MaybeOwned<at::Tensor> reduction_input(const at::Tensor& t, std::int64_t dim, Reduction& plan) {
  if (plan_reduction(dims(t.sizes()), dims(t.strides()), dim, plan)) return c10::MaybeOwned<at::Tensor>::borrowed(t);
  at::Tensor copy = t.contiguous();
  plan_reduction(dims(copy.sizes()), dims(copy.strides()), dim, plan);
  return c10::MaybeOwned<at::Tensor>::owned(std::move(copy));
}

// aten's sum dtype: the one asked for, else int64 for integers and bool, else the input's.
ScalarType sum_result(const at::Tensor& self, std::optional<ScalarType> dtype) {
  const char* op = op_names::sum;
  check_input(self.scalar_type(), op, "self");
  const ScalarType result = dtype                                           ? *dtype
                            : c10::isIntegralType(self.scalar_type(), true) ? ScalarType::Long
                                                                            : self.scalar_type();
  check_result(result, op);
  return result;
}

template <class Sizes, class Vector>
Vector reduced_shape(Sizes sizes, std::int64_t dim, bool keepdim) {
  Vector shape(sizes.begin(), sizes.end());
  if (!shape.empty()) {
    if (keepdim) {
      shape[dim] = 1;
    } else {
      shape.erase(shape.begin() + dim);
    }
  }
  return shape;
}

}  // namespace

at::Tensor sum_cuda(const at::Tensor& self, std::int64_t dim, bool keepdim, std::optional<ScalarType> dtype) {
  TensorChecks checks(op_names::sum);
  checks.required(self, "self");
  const ScalarType result = sum_result(self, dtype);
  dim = c10::maybe_wrap_dim(dim, self.dim());
  const torch::DeviceScope scope(checks.device());
  at::Tensor out =
      new_cuda_tensor(scope, reduced_shape<at::IntArrayRef, c10::DimVector>(self.sizes(), dim, keepdim), result);
  if (out.numel() == 0) return out;
  Reduction plan;
  const auto input = reduction_input(self, dim, plan);
  static JitFunction& k = kernel(kReduction, "sum_kernel");
  torch::launch(scope, k, {.grid = {cdiv(plan.rows, plan.block_j)}}, *input, out, plan.rows, plan.length, plan.inner,
                plan.stride_outer, plan.stride_r, plan.stride_inner, plan.block_j, plan.block_r, compute_dtype(result));
  return out;
}

at::Tensor sum_meta(const at::Tensor& self, std::int64_t dim, bool keepdim, std::optional<ScalarType> dtype) {
  const ScalarType result = sum_result(self, dtype);
  dim = c10::maybe_wrap_dim(dim, self.dim());
  return new_meta_tensor(reduced_shape<c10::SymIntArrayRef, c10::SymDimVector>(self.sym_sizes(), dim, keepdim), result);
}

at::Tensor softmax_cuda(const at::Tensor& self, std::int64_t dim) {
  TensorChecks checks(op_names::softmax);
  checks.required(self, "self");
  check_float(self, op_names::softmax, "self");
  dim = c10::maybe_wrap_dim(dim, self.dim());
  const torch::DeviceScope scope(checks.device());
  at::Tensor out = new_cuda_tensor(scope, self.sizes(), self.scalar_type());
  if (out.numel() == 0) return out;
  Reduction plan;
  const auto input = reduction_input(self, dim, plan);
  static JitFunction& k = kernel(kReduction, "softmax_kernel");
  torch::launch(scope, k, {.grid = {cdiv(plan.rows, plan.block_j)}}, *input, out, plan.rows, plan.length, plan.inner,
                plan.stride_outer, plan.stride_r, plan.stride_inner, plan.block_j, plan.block_r,
                compute_dtype(self.scalar_type()));
  return out;
}

at::Tensor softmax_meta(const at::Tensor& self, std::int64_t dim) {
  check_float(self, op_names::softmax, "self");
  (void)c10::maybe_wrap_dim(dim, self.dim());
  return new_meta_tensor(self.sym_sizes(), self.scalar_type());
}

}  // namespace tritonrt::ops

// layer_norm over the trailing dims, forward only.

#include <algorithm>
#include <utility>

#include "ops.h"
#include "support.h"

namespace tritonrt::ops {
namespace {

using at::ScalarType;
using torch::TensorChecks;

constexpr std::int64_t kLayerNormMaxBlock = 4096;

// aten's layer_norm checks: the trailing dims of input are normalized_shape, and weight and
// bias (when given) have that shape. Sizes may be symbolic (Meta).
void check_layer_norm(const at::Tensor& input, at::IntArrayRef normalized_shape,
                      const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias) {
  const char* op = op_names::layer_norm;
  check_float(input, op, "input");
  if (normalized_shape.empty()) fail(op, "normalized_shape must have at least one element, got []");
  auto matches = [&](c10::SymIntArrayRef sizes) {
    if (sizes.size() != normalized_shape.size()) return false;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] != normalized_shape[i]) return false;
    }
    return true;
  };
  for (const auto& [param, name] : {std::pair{&weight, "weight"}, std::pair{&bias, "bias"}}) {
    if (param->has_value() && (*param)->defined()) {
      check_input((*param)->scalar_type(), op, name);
      if (!matches((*param)->sym_sizes())) {
        fail(op, std::string("argument '") + name + "' has shape " + str((*param)->sym_sizes()) +
                     " but normalized_shape is " + str(normalized_shape));
      }
    }
  }
  const auto sizes = input.sym_sizes();
  if (sizes.size() < normalized_shape.size() || !matches(sizes.slice(sizes.size() - normalized_shape.size()))) {
    fail(op, "normalized_shape " + str(normalized_shape) + " must equal the trailing dims of input, whose shape is " +
                 str(sizes));
  }
}

std::optional<at::Tensor> contiguous(const std::optional<at::Tensor>& t) {
  if (!t.has_value() || !t->defined() || t->is_contiguous()) return t;
  return t->contiguous();
}

}  // namespace

at::Tensor layer_norm_cuda(const at::Tensor& input, at::IntArrayRef normalized_shape,
                           const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias, double eps) {
  TensorChecks checks(op_names::layer_norm);
  checks.required(input, "input").optional(weight, "weight").optional(bias, "bias");
  check_layer_norm(input, normalized_shape, weight, bias);
  const torch::DeviceScope scope(checks.device());
  at::Tensor out = new_cuda_tensor(scope, input.sizes(), input.scalar_type());
  if (out.numel() == 0) return out;
  std::int64_t n = 1;
  for (const std::int64_t s : normalized_shape) n *= s;
  const std::int64_t rows = input.numel() / n;
  const auto x = input.expect_contiguous();
  const std::int64_t block = std::min(next_pow2(n), kLayerNormMaxBlock);
  const DType acc = compute_dtype(input.scalar_type());
  static JitFunction& k = kernel(kLayerNorm, "layer_norm_kernel");
  torch::launch(scope, k, {.grid = {rows}, .options = {.num_warps = block >= 2048 ? 8 : 4}}, *x, contiguous(weight),
                contiguous(bias), out, n, scalar(acc, eps), block, acc);
  return out;
}

at::Tensor layer_norm_meta(const at::Tensor& input, at::IntArrayRef normalized_shape,
                           const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias, double) {
  check_meta_devices(op_names::layer_norm,
                     {{&input, "input"}, {weight ? &*weight : nullptr, "weight"}, {bias ? &*bias : nullptr, "bias"}});
  check_layer_norm(input, normalized_shape, weight, bias);
  return new_meta_tensor(input.sym_sizes(), input.scalar_type());
}

}  // namespace tritonrt::ops

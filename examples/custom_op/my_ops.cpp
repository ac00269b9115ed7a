// my_ops::scaled_silu: a Triton kernel (my_ops/kernels.py) as a torch operator. The CUDA kernel
// launches it through tritonrt on the current stream; the Meta kernel gives torch.compile and
// fake tensors the output's shape and dtype. pt2_compliant_tag tells torch.compile it may
// trust the op: it passes torch.library.opcheck (test_my_ops.py).
#include <ATen/ops/empty_like.h>
#include <torch/library.h>

#include <tritonrt/torch.h>

namespace {

constexpr const char* kOp = "my_ops::scaled_silu";

void check_dtype(const at::Tensor& x) {
  TORCH_CHECK(x.is_floating_point(), kOp, ": x must be a floating-point tensor, got ", x.scalar_type());
}

at::Tensor scaled_silu_cuda(const at::Tensor& x, double scale) {
  tritonrt::torch::TensorChecks checks(kOp);
  checks.required(x, "x");  // defined, on a CUDA device, of a dtype Triton takes
  check_dtype(x);
  const tritonrt::torch::DeviceScope scope(checks.device());  // the tensor's device, current
  const at::Tensor input = x.contiguous();
  at::Tensor out = at::empty_like(input);
  if (out.numel() == 0) return out;
  // The kernel is a module of this Python package, found on sys.path like any import. Its
  // heuristics pick BLOCK, which the grid reads.
  static tritonrt::JitFunction& kernel = tritonrt::JitFunction::get("my_ops.kernels", "scaled_silu_kernel");
  const auto grid = [](const tritonrt::BoundArgs& a) {
    return tritonrt::Grid{tritonrt::cdiv(a.integer("n"), a.integer("BLOCK"))};
  };
  tritonrt::torch::launch(scope, kernel, {.grid_fn = grid}, input, out, input.numel(), scale);
  return out;
}

at::Tensor scaled_silu_meta(const at::Tensor& x, double /*scale*/) {
  check_dtype(x);
  return at::empty_like(x, at::MemoryFormat::Contiguous);
}

}  // namespace

TORCH_LIBRARY(my_ops, m) { m.def("scaled_silu(Tensor x, float scale=1.0) -> Tensor", {at::Tag::pt2_compliant_tag}); }

TORCH_LIBRARY_IMPL(my_ops, CUDA, m) { m.impl("scaled_silu", &scaled_silu_cuda); }

TORCH_LIBRARY_IMPL(my_ops, Meta, m) { m.impl("scaled_silu", &scaled_silu_meta); }

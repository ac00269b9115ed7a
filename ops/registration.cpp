// Registration of every operator in TRITONRT_OPS (ops.h) with the dispatcher: the schema,
// the CUDA and Meta kernels, an Autograd kernel (no derivatives) and a CPU kernel that names
// the argument at fault.

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/functions/basic_ops.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/library.h>

#include <memory>
#include <vector>

#include "ops.h"

namespace tritonrt::ops {
namespace {

using torch::TensorChecks;

// Registered for CPU, so that a call with CPU tensors names the argument at fault instead
// of failing with "could not run ... with arguments from the 'CPU' backend".
void reject_cpu(const c10::OperatorHandle& op, ::torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  const auto& params = schema.arguments();
  TensorChecks checks(schema.name());
  const std::size_t first = stack->size() - params.size();
  for (std::size_t i = 0; i < params.size(); ++i) {
    const c10::IValue& value = (*stack)[first + i];
    if (value.isTensor()) checks.required(value.toTensor(), params[i].name());
  }
  throw ArgumentError(schema.name() + ": runs on CUDA tensors only");
}

// Registered for Autograd: the ops have no derivatives. A result computed from tensors that
// require grad gets a grad_fn that raises "derivative for tritonrt::add is not implemented"
// on backward, as aten's own non-differentiable ops do (torch's fallback would only warn and
// leave the inputs without a gradient). An input with a forward-mode gradient (a dual
// tensor) is a NotImplementedError at the call, as in aten, instead of a result silently
// without one.
//
// Most calls need no gradient, and their next stop is the op's CUDA kernel: those call it
// right away, one dispatcher step instead of two. Any other key left below autograd (Python
// for fake tensors and dispatch modes, Functionalize, the lazy Negative and Conjugate bits,
// another backend) gets the call through the dispatcher, as the redispatch gives it.
bool needs_grad(const at::Tensor& t) { return t.defined() && t.requires_grad(); }
bool needs_grad(const std::optional<at::Tensor>& t) { return t.has_value() && needs_grad(*t); }
template <class T>
bool needs_grad(const T&) {
  return false;
}

void add_if_needs_grad(std::vector<at::Tensor>& inputs, const at::Tensor& t) {
  if (needs_grad(t)) inputs.push_back(t);
}
void add_if_needs_grad(std::vector<at::Tensor>& inputs, const std::optional<at::Tensor>& t) {
  if (needs_grad(t)) inputs.push_back(*t);
}
template <class T>
void add_if_needs_grad(std::vector<at::Tensor>&, const T&) {}

// A tensor without autograd metadata (the common case) answers from one null check.
bool has_forward_grad(const at::Tensor& t) { return t.defined() && t._fw_grad(/*level=*/0).defined(); }
bool has_forward_grad(const std::optional<at::Tensor>& t) { return t.has_value() && has_forward_grad(*t); }
template <class T>
bool has_forward_grad(const T&) {
  return false;
}

template <const char* Name, auto Cuda, class Signature = decltype(Cuda)>
struct NoDerivative;

template <const char* Name, auto Cuda, class... Args>
struct NoDerivative<Name, Cuda, at::Tensor (*)(Args...)> {
  static at::Tensor call(c10::DispatchKeySet keys, Args... args) {
    TORCH_CHECK_NOT_IMPLEMENTED(!(has_forward_grad(args) || ...), Name,
                                ": forward-mode AD is not implemented (an input is a dual tensor)");
    const c10::DispatchKeySet below = keys & c10::after_autograd_keyset;
    const bool grad = at::GradMode::is_enabled() && (needs_grad(args) || ...);
    at::Tensor out;
    {
      const at::AutoDispatchBelowADInplaceOrView below_autograd;
      if (!grad && below.highestPriorityTypeId() == c10::DispatchKey::CUDA) return Cuda(args...);
      static const auto op =
          c10::Dispatcher::singleton().findSchemaOrThrow(Name, "").template typed<at::Tensor(Args...)>();
      out = op.redispatch(below, args...);
    }
    if (!grad) return out;
    std::vector<at::Tensor> inputs;
    (add_if_needs_grad(inputs, args), ...);
    std::shared_ptr<::torch::autograd::NotImplemented> node(new ::torch::autograd::NotImplemented(Name),
                                                            ::torch::autograd::deleteNode);
    node->set_next_edges(::torch::autograd::collect_next_edges(inputs));
    ::torch::autograd::set_history(out, node);
    return out;
  }
};

}  // namespace
}  // namespace tritonrt::ops

// pt2_compliant_tag: each op has a Meta kernel with the CUDA kernel's checks and passes
// torch.library.opcheck (tests/python/test_ops.py), so torch.compile traces it without a
// graph break and trusts its fake-tensor results.
TORCH_LIBRARY(tritonrt, m) {
#define TRITONRT_DEFINE_OP(name, schema) m.def(schema, {at::Tag::pt2_compliant_tag});
  TRITONRT_OPS(TRITONRT_DEFINE_OP)
#undef TRITONRT_DEFINE_OP
}

TORCH_LIBRARY_IMPL(tritonrt, CUDA, m) {
#define TRITONRT_CUDA_KERNEL(name, schema) m.impl(#name, TORCH_FN(tritonrt::ops::name##_cuda));
  TRITONRT_OPS(TRITONRT_CUDA_KERNEL)
#undef TRITONRT_CUDA_KERNEL
}

TORCH_LIBRARY_IMPL(tritonrt, Meta, m) {
#define TRITONRT_META_KERNEL(name, schema) m.impl(#name, TORCH_FN(tritonrt::ops::name##_meta));
  TRITONRT_OPS(TRITONRT_META_KERNEL)
#undef TRITONRT_META_KERNEL
}

TORCH_LIBRARY_IMPL(tritonrt, Autograd, m) {
  using tritonrt::ops::NoDerivative;
#define TRITONRT_AUTOGRAD_KERNEL(name, schema) \
  m.impl(#name, TORCH_FN((NoDerivative<tritonrt::ops::op_names::name, &tritonrt::ops::name##_cuda>::call)));
  TRITONRT_OPS(TRITONRT_AUTOGRAD_KERNEL)
#undef TRITONRT_AUTOGRAD_KERNEL
}

TORCH_LIBRARY_IMPL(tritonrt, CPU, m) {
#define TRITONRT_CPU_KERNEL(name, schema) \
  m.impl(#name, torch::CppFunction::makeFromBoxedFunction<&tritonrt::ops::reject_cpu>());
  TRITONRT_OPS(TRITONRT_CPU_KERNEL)
#undef TRITONRT_CPU_KERNEL
}

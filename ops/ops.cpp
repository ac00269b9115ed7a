// tritonrt's operator library: Triton kernels (kernels/*.py) behind TORCH_LIBRARY operators
// with aten's semantics. Loading this library (torch.ops.load_library, or `import
// tritonrt_ops`) registers torch.ops.tritonrt.*; C++ calls them through the dispatcher.
//
// Every operator returns a new contiguous tensor; inputs of any strides are read in place
// (through strides, or a contiguous copy where the kernel needs one). CUDA tensors only:
// a call with CPU tensors fails naming the argument. Meta kernels give torch.compile the
// output's shape and dtype, with symbolic sizes where the operator's arguments allow.

#include <ATen/ExpandUtils.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/Context.h>
#include <ATen/EmptyTensor.h>
#include <ATen/cuda/CUDAContextLight.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/result_type_native.h>
#include <c10/core/WrapDimMinimal.h>
#include <torch/csrc/autograd/functions/basic_ops.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <dlfcn.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "layout.h"
#include "tritonrt/torch.h"

namespace tritonrt::ops {
namespace {

using at::ScalarType;
using torch::TensorChecks;

// The operators' qualified names, as the dispatcher and the error messages spell them.
constexpr char kAddName[] = "tritonrt::add";
constexpr char kSumName[] = "tritonrt::sum";
constexpr char kSoftmaxName[] = "tritonrt::softmax";
constexpr char kAxpyName[] = "tritonrt::axpy";
constexpr char kLayerNormName[] = "tritonrt::layer_norm";
constexpr char kMatmulName[] = "tritonrt::matmul";

constexpr const char* kElementwise = "tritonrt_elementwise.py";
constexpr const char* kReduction = "tritonrt_reduction.py";
constexpr const char* kLayerNorm = "tritonrt_layer_norm.py";
constexpr const char* kMatmul = "tritonrt_matmul.py";

// --- kernels ---------------------------------------------------------------------------------

// The kernel directory: $TRITONRT_OPS_KERNELS, else found from this library's own path:
// kernels/ beside it (build tree, Python package) or the installed data directory.
std::string find_kernels() {
  if (const char* dir = std::getenv("TRITONRT_OPS_KERNELS"); dir != nullptr && *dir != '\0') return dir;
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&find_kernels), &info) == 0 || info.dli_fname == nullptr) {
    throw SourceError("tritonrt ops: cannot find the path of the ops library to locate its kernels; "
                      "set TRITONRT_OPS_KERNELS to the kernel directory");
  }
  const auto library_dir = std::filesystem::absolute(info.dli_fname).parent_path();
  std::string tried;
  for (const auto& candidate : {library_dir / "kernels", library_dir / TRITONRT_OPS_INSTALLED_KERNELS}) {
    const auto dir = candidate.lexically_normal();
    if (std::filesystem::is_regular_file(dir / kElementwise)) return dir.string();
    tried += (tried.empty() ? "" : ", ") + dir.string();
  }
  throw SourceError("tritonrt ops: the kernel files are in none of " + tried +
                    "; set TRITONRT_OPS_KERNELS to their directory");
}

JitFunction& kernel(const char* file, const char* name) {
  static const std::string dir = find_kernels();
  return JitFunction::get(dir + "/" + file, name);
}

// --- shared pieces ---------------------------------------------------------------------------

[[noreturn]] void fail(const char* op, const std::string& problem) {
  throw ArgumentError(std::string(op) + ": " + problem);
}

// Shapes as "[2, 3]", built without iostreams: on the H200 machine, inserting a SymInt into
// a stream this library constructed crashed inside libstdc++ (seen twice, cause not pinned).
std::string dim_text(std::int64_t v) { return std::to_string(v); }
std::string dim_text(const c10::SymInt& v) {
  const auto concrete = v.maybe_as_int();
  return concrete ? std::to_string(*concrete) : "s?";  // a symbolic size under tracing
}

template <class Sizes>
std::string str(const Sizes& sizes) {
  std::string text = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + dim_text(sizes[i]);
  return text + "]";
}

Dims dims(at::IntArrayRef values) { return Dims(values.data(), values.size()); }

bool is_float(ScalarType t) {
  return t == ScalarType::Half || t == ScalarType::BFloat16 || t == ScalarType::Float || t == ScalarType::Double;
}

// Inputs of the arithmetic kernels: any dtype Triton has (fp8 included: it is converted).
void check_input(ScalarType t, const char* op, const char* param) { (void)torch::checked_dtype(t, op, param); }

// Results of the arithmetic kernels: any dtype Triton has but fp8, which has no arithmetic
// in aten either.
void check_result(ScalarType t, const char* op) {
  if (!torch::to_dtype(t) || c10::isFloat8Type(t)) {
    fail(op, std::string("the result would have dtype ") + c10::toString(t) + ", which has no arithmetic here");
  }
}

void check_float(const at::Tensor& t, const char* op, const char* name) {
  if (!is_float(t.scalar_type())) {
    fail(op, std::string("argument '") + name + "' has dtype " + c10::toString(t.scalar_type()) +
                 "; it must be a floating-point tensor (Half, BFloat16, Float or Double)");
  }
}

// The type arithmetic and accumulation run in, as aten's opmath / accumulate types: fp32
// for 16-bit floats, fp64 for double, and int64 for integers and bool (wrapping like the
// narrow type, then stored back narrowed).
DType compute_dtype(ScalarType t) {
  if (t == ScalarType::Double) return DType::fp64;
  if (c10::isFloatingType(t)) return DType::fp32;
  return DType::i64;
}

// A new contiguous tensor on the scope's device, from torch's caching allocator (which
// serves the current device: the scope makes it the tensors' one). CUDA tensors can exist
// before torch has set CUDA up (from_blob), so the allocator is initialized first, as
// at::empty does.
at::Tensor new_cuda_tensor(const torch::DeviceScope&, at::IntArrayRef sizes, ScalarType dtype) {
  at::globalContext().lazyInitDevice(c10::DeviceType::CUDA);
  return at::detail::empty_generic(sizes, at::cuda::getCUDADeviceAllocator(), c10::DispatchKeySet(c10::DispatchKey::CUDA),
                                   dtype, std::nullopt);
}

at::Tensor new_meta_tensor(c10::SymIntArrayRef sizes, ScalarType dtype) {
  return at::empty_symint(sizes, at::TensorOptions().dtype(dtype).device(c10::DeviceType::Meta));
}

// --- add / axpy: out = a + alpha * b -----------------------------------------------------------

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
    case ScalarType::Char: (void)alpha.toChar(); break;
    case ScalarType::Short: (void)alpha.toShort(); break;
    case ScalarType::Int: (void)alpha.toInt(); break;
    case ScalarType::Byte: (void)alpha.toByte(); break;
    case ScalarType::UInt16: (void)alpha.toUInt16(); break;
    case ScalarType::UInt32: (void)alpha.toUInt32(); break;
    case ScalarType::Double: break;
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
  torch::launch(scope, strided, {.grid = grid}, a_arg, b, out, alpha_value, n, size[1], size[2], size[3], sa[0], sa[1], sa[2],
                sa[3], sb[0], sb[1], sb[2], sb[3], kElementwiseBlock, compute);
  return out;
}

at::Tensor binary_meta(const char* op, const at::Tensor* a, const char* a_name, const at::Tensor& b,
                       const char* b_name, const c10::Scalar& alpha) {
  const ScalarType result = binary_result(a, a_name, b, b_name, alpha, op);
  if (a == nullptr) return new_meta_tensor(b.sym_sizes(), result);
  return new_meta_tensor(at::infer_size_symdimvector(a->sym_sizes(), b.sym_sizes()), result);
}

at::Tensor add_cuda(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  return binary_cuda(kAddName, self, "self", other, "other", alpha);
}

at::Tensor add_meta(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  return binary_meta(kAddName, &self, "self", other, "other", alpha);
}

// axpy(x, y, alpha) is add(y, x, alpha=alpha); without y it is alpha * x in x's dtype.
at::Tensor axpy_cuda(const at::Tensor& x, const std::optional<at::Tensor>& y, const std::optional<c10::Scalar>& alpha) {
  return binary_cuda(kAxpyName, y, "y", x, "x", alpha.value_or(c10::Scalar(1)));
}

at::Tensor axpy_meta(const at::Tensor& x, const std::optional<at::Tensor>& y, const std::optional<c10::Scalar>& alpha) {
  return binary_meta(kAxpyName, get(y), "y", x, "x", alpha.value_or(c10::Scalar(1)));
}

// --- sum and softmax: reductions along one dim ----------------------------------------------

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
  const char* op = kSumName;
  check_input(self.scalar_type(), op, "self");
  const ScalarType result = dtype ? *dtype
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

at::Tensor sum_cuda(const at::Tensor& self, std::int64_t dim, bool keepdim, std::optional<ScalarType> dtype) {
  TensorChecks checks(kSumName);
  checks.required(self, "self");
  const ScalarType result = sum_result(self, dtype);
  dim = c10::maybe_wrap_dim(dim, self.dim());
  const torch::DeviceScope scope(checks.device());
  at::Tensor out = new_cuda_tensor(scope, reduced_shape<at::IntArrayRef, c10::DimVector>(self.sizes(), dim, keepdim),
                                   result);
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
  TensorChecks checks(kSoftmaxName);
  checks.required(self, "self");
  check_float(self, kSoftmaxName, "self");
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
  check_float(self, kSoftmaxName, "self");
  (void)c10::maybe_wrap_dim(dim, self.dim());
  return new_meta_tensor(self.sym_sizes(), self.scalar_type());
}

// --- layer_norm --------------------------------------------------------------------------------

constexpr std::int64_t kLayerNormMaxBlock = 4096;

// aten's layer_norm checks: the trailing dims of input are normalized_shape, and weight and
// bias (when given) have that shape. Sizes may be symbolic (Meta).
void check_layer_norm(const at::Tensor& input, at::IntArrayRef normalized_shape, const std::optional<at::Tensor>& weight,
                      const std::optional<at::Tensor>& bias) {
  const char* op = kLayerNormName;
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

at::Tensor layer_norm_cuda(const at::Tensor& input, at::IntArrayRef normalized_shape,
                           const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
                           double eps) {
  TensorChecks checks(kLayerNormName);
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
  check_layer_norm(input, normalized_shape, weight, bias);
  return new_meta_tensor(input.sym_sizes(), input.scalar_type());
}

// --- matmul ----------------------------------------------------------------------------------

// 128 x 128 tiles, 64 deep, 3 stages: 96 KiB of shared memory, above the 48 KiB a kernel
// gets without opting in.
constexpr std::int64_t kTileM = 128, kTileN = 128, kTileK = 64, kGroupM = 8;
constexpr CompileOptions kMatmulOptions{.num_warps = 8, .num_stages = 3};

void check_matmul(const at::Tensor& a, const at::Tensor& b) {
  const char* op = kMatmulName;
  for (const auto& [t, name] : {std::pair{&a, "a"}, std::pair{&b, "b"}}) {
    if (t->dim() != 2) fail(op, std::string("argument '") + name + "' must be 2-D, got shape " + str(t->sym_sizes()));
    if (t->scalar_type() != ScalarType::Half && t->scalar_type() != ScalarType::BFloat16) {
      fail(op, std::string("argument '") + name + "' has dtype " + c10::toString(t->scalar_type()) +
                   "; matmul takes Half or BFloat16");
    }
  }
  if (a.scalar_type() != b.scalar_type()) {
    fail(op, std::string("a and b must have the same dtype, got ") + c10::toString(a.scalar_type()) + " and " +
                 c10::toString(b.scalar_type()));
  }
  if (a.sym_size(1) != b.sym_size(0)) {
    fail(op, "shapes " + str(a.sym_sizes()) + " and " + str(b.sym_sizes()) + " cannot be multiplied");
  }
}

at::Tensor matmul_cuda(const at::Tensor& a, const at::Tensor& b) {
  TensorChecks checks(kMatmulName);
  checks.required(a, "a").required(b, "b");
  check_matmul(a, b);
  const std::int64_t m = a.size(0), n = b.size(1), k = a.size(1);
  const torch::DeviceScope scope(checks.device());
  at::Tensor out = new_cuda_tensor(scope, {m, n}, a.scalar_type());
  if (out.numel() == 0) return out;  // k == 0 still launches: the kernel writes zeros
  static JitFunction& kern = kernel(kMatmul, "matmul_kernel");
  torch::launch(scope, kern, {.grid = {cdiv(m, kTileM) * cdiv(n, kTileN)}, .options = kMatmulOptions}, a, b, out, m, n, k,
                a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1), kTileM, kTileN, kTileK,
                kGroupM);
  return out;
}

at::Tensor matmul_meta(const at::Tensor& a, const at::Tensor& b) {
  check_matmul(a, b);
  return new_meta_tensor({a.sym_size(0), b.sym_size(1)}, a.scalar_type());
}

// --- registration ----------------------------------------------------------------------------

constexpr const char* kOps[] = {"add", "sum", "softmax", "axpy", "layer_norm", "matmul"};

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
    TORCH_CHECK_NOT_IMPLEMENTED(!(has_forward_grad(args) || ...),
                                Name, ": forward-mode AD is not implemented (an input is a dual tensor)");
    const c10::DispatchKeySet below = keys & c10::after_autograd_keyset;
    const bool grad = at::GradMode::is_enabled() && (needs_grad(args) || ...);
    at::Tensor out;
    {
      const at::AutoDispatchBelowADInplaceOrView below_autograd;
      if (!grad && below.highestPriorityTypeId() == c10::DispatchKey::CUDA) return Cuda(args...);
      static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow(Name, "").template typed<at::Tensor(Args...)>();
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

TORCH_LIBRARY(tritonrt, m) {
  m.def("add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  m.def("sum(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor");
  m.def("softmax(Tensor self, int dim=-1) -> Tensor");
  m.def("axpy(Tensor x, Tensor? y=None, Scalar? alpha=None) -> Tensor");
  m.def("layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
        "float eps=1e-05) -> Tensor");
  m.def("matmul(Tensor a, Tensor b) -> Tensor");
}

TORCH_LIBRARY_IMPL(tritonrt, CUDA, m) {
  using namespace tritonrt::ops;
  m.impl("add", TORCH_FN(add_cuda));
  m.impl("sum", TORCH_FN(sum_cuda));
  m.impl("softmax", TORCH_FN(softmax_cuda));
  m.impl("axpy", TORCH_FN(axpy_cuda));
  m.impl("layer_norm", TORCH_FN(layer_norm_cuda));
  m.impl("matmul", TORCH_FN(matmul_cuda));
}

TORCH_LIBRARY_IMPL(tritonrt, Meta, m) {
  using namespace tritonrt::ops;
  m.impl("add", TORCH_FN(add_meta));
  m.impl("sum", TORCH_FN(sum_meta));
  m.impl("softmax", TORCH_FN(softmax_meta));
  m.impl("axpy", TORCH_FN(axpy_meta));
  m.impl("layer_norm", TORCH_FN(layer_norm_meta));
  m.impl("matmul", TORCH_FN(matmul_meta));
}

TORCH_LIBRARY_IMPL(tritonrt, Autograd, m) {
  using namespace tritonrt::ops;
  m.impl("add", TORCH_FN((NoDerivative<kAddName, &add_cuda>::call)));
  m.impl("sum", TORCH_FN((NoDerivative<kSumName, &sum_cuda>::call)));
  m.impl("softmax", TORCH_FN((NoDerivative<kSoftmaxName, &softmax_cuda>::call)));
  m.impl("axpy", TORCH_FN((NoDerivative<kAxpyName, &axpy_cuda>::call)));
  m.impl("layer_norm", TORCH_FN((NoDerivative<kLayerNormName, &layer_norm_cuda>::call)));
  m.impl("matmul", TORCH_FN((NoDerivative<kMatmulName, &matmul_cuda>::call)));
}

TORCH_LIBRARY_IMPL(tritonrt, CPU, m) {
  for (const char* op : tritonrt::ops::kOps) {
    m.impl(op, torch::CppFunction::makeFromBoxedFunction<&tritonrt::ops::reject_cpu>());
  }
}

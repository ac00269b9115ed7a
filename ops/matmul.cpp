// matmul of two 2-D fp16/bf16 tensors, tiles above the 48 KiB of shared memory a kernel gets
// without opting in.

#include <utility>

#include "ops.h"
#include "support.h"

namespace tritonrt::ops {
namespace {

using at::ScalarType;
using torch::TensorChecks;

// 128 x 128 tiles, 64 deep, 3 stages: 96 KiB of shared memory, above the 48 KiB a kernel
// gets without opting in.
constexpr std::int64_t kTileM = 128, kTileN = 128, kTileK = 64, kGroupM = 8;
constexpr CompileOptions kMatmulOptions{.num_warps = 8, .num_stages = 3};

void check_matmul(const at::Tensor& a, const at::Tensor& b) {
  const char* op = op_names::matmul;
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

}  // namespace

at::Tensor matmul_cuda(const at::Tensor& a, const at::Tensor& b) {
  TensorChecks checks(op_names::matmul);
  checks.required(a, "a").required(b, "b");
  check_matmul(a, b);
  const std::int64_t m = a.size(0), n = b.size(1), k = a.size(1);
  const torch::DeviceScope scope(checks.device());
  at::Tensor out = new_cuda_tensor(scope, {m, n}, a.scalar_type());
  if (out.numel() == 0) return out;  // k == 0 still launches: the kernel writes zeros
  static JitFunction& kern = kernel(kMatmul, "matmul_kernel");
  torch::launch(scope, kern, {.grid = {cdiv(m, kTileM) * cdiv(n, kTileN)}, .options = kMatmulOptions}, a, b, out, m, n,
                k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1), kTileM, kTileN,
                kTileK, kGroupM);
  return out;
}

at::Tensor matmul_meta(const at::Tensor& a, const at::Tensor& b) {
  check_meta_devices(op_names::matmul, {{&a, "a"}, {&b, "b"}});
  check_matmul(a, b);
  return new_meta_tensor({a.sym_size(0), b.sym_size(1)}, a.scalar_type());
}

}  // namespace tritonrt::ops

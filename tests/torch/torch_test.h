// Shared pieces of the torch tests: the operator library loaded as torch.ops.load_library
// loads it, typed handles of its operators, and the CPU and GPU fixtures.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <algorithm>
#include <optional>
#include <random>
#include <string>

#include "reference.h"
#include "tritonrt/torch.h"

namespace tritonrt::test {

using at::ScalarType;

inline const std::string kAdapterKernels = TRITONRT_TORCH_TEST_KERNELS;
inline const std::string kOpsKernels = TRITONRT_OPS_KERNEL_DIR;

// Loads the operator library once, as torch.ops.load_library would.
inline void load_ops() {
  static void* const handle = dlopen(TRITONRT_OPS_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
  ASSERT_NE(handle, nullptr) << "cannot load " << TRITONRT_OPS_LIBRARY << ": " << dlerror();
}

template <class Signature>
inline c10::TypedOperatorHandle<Signature> op(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Signature>();
}

using BinarySig = at::Tensor(const at::Tensor&, const at::Tensor&, const c10::Scalar&);
using SumSig = at::Tensor(const at::Tensor&, int64_t, bool, std::optional<ScalarType>);
using SoftmaxSig = at::Tensor(const at::Tensor&, int64_t);
using AxpySig = at::Tensor(const at::Tensor&, const std::optional<at::Tensor>&, const std::optional<c10::Scalar>&);
using LayerNormSig = at::Tensor(const at::Tensor&, at::IntArrayRef, const std::optional<at::Tensor>&,
                                const std::optional<at::Tensor>&, double);
using MatmulSig = at::Tensor(const at::Tensor&, const at::Tensor&);

inline at::Tensor tritonrt_add(const at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha = 1) {
  return op<BinarySig>("tritonrt::add").call(a, b, alpha);
}
inline at::Tensor tritonrt_sum(const at::Tensor& t, int64_t dim, bool keepdim = false,
                               std::optional<ScalarType> dtype = std::nullopt) {
  return op<SumSig>("tritonrt::sum").call(t, dim, keepdim, dtype);
}
inline at::Tensor tritonrt_softmax(const at::Tensor& t, int64_t dim = -1) {
  return op<SoftmaxSig>("tritonrt::softmax").call(t, dim);
}
inline at::Tensor tritonrt_axpy(const at::Tensor& x, const std::optional<at::Tensor>& y = std::nullopt,
                                const std::optional<c10::Scalar>& alpha = std::nullopt) {
  return op<AxpySig>("tritonrt::axpy").call(x, y, alpha);
}
inline at::Tensor tritonrt_layer_norm(const at::Tensor& x, at::IntArrayRef shape, const std::optional<at::Tensor>& w,
                                      const std::optional<at::Tensor>& b, double eps = 1e-5) {
  return op<LayerNormSig>("tritonrt::layer_norm").call(x, shape, w, b, eps);
}
inline at::Tensor tritonrt_matmul(const at::Tensor& a, const at::Tensor& b) {
  return op<MatmulSig>("tritonrt::matmul").call(a, b);
}

// A CUDA tensor without storage: enough for the checks, which read only device and dtype,
// on a machine without a GPU.
inline at::Tensor fake_cuda(c10::DeviceIndex index, ScalarType dtype = ScalarType::Float) {
  return at::Tensor(c10::make_intrusive<c10::TensorImpl>(c10::DispatchKeySet(c10::DispatchKey::CUDA),
                                                         c10::scalarTypeToTypeMeta(dtype),
                                                         c10::Device(c10::DeviceType::CUDA, index)));
}

class Ops : public ::testing::Test {
 protected:
  void SetUp() override { load_ops(); }
  static at::Tensor meta(at::IntArrayRef sizes, ScalarType dtype = ScalarType::Float) {
    return at::empty(sizes, at::TensorOptions().dtype(dtype).device(at::kMeta));
  }
};

// Tolerances per dtype for results computed in a different order than aten's, or rounded
// from fp32 where aten rounds a slightly different fp32 value.
struct Tolerance {
  double rtol, atol;
};

class GpuOps : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!::torch::cuda::is_available()) GTEST_SKIP() << "needs a CUDA GPU: torch.cuda is not available here";
    load_ops();
    const std::uint64_t seed = std::random_device{}();
    at::manual_seed(seed);
    RecordProperty("seed", std::to_string(seed));
    trace_.emplace(__FILE__, __LINE__, "random seed " + std::to_string(seed));
  }
  void TearDown() override { trace_.reset(); }

  static at::TensorOptions cuda(ScalarType dtype) { return at::TensorOptions().dtype(dtype).device(at::kCUDA); }

  // Random values of `dtype` on the GPU: normal for floats, small integers otherwise.
  static at::Tensor random(at::IntArrayRef sizes, ScalarType dtype) {
    if (dtype == ScalarType::Bool) return at::randint(0, 2, sizes, cuda(ScalarType::Long)).to(dtype);
    if (c10::isIntegralType(dtype, false)) {
      const int64_t low = dtype == ScalarType::Byte ? 0 : -50;
      return at::randint(low, 50, sizes, cuda(ScalarType::Long)).to(dtype);
    }
    return at::randn(sizes, cuda(ScalarType::Float)).to(dtype);
  }

  static Tolerance tolerance(ScalarType dtype, Tolerance fp32) {
    switch (dtype) {
      case ScalarType::Half:
        return {std::max(fp32.rtol, 2e-3), std::max(fp32.atol, 1e-3)};
      case ScalarType::BFloat16:
        return {std::max(fp32.rtol, 1.6e-2), std::max(fp32.atol, 1e-2)};
      case ScalarType::Float:
        return fp32;
      case ScalarType::Double:
        return {1e-9, 1e-12};
      default:
        return {0, 0};  // integers and bool: exact
    }
  }

  // Same shape, dtype and values (within tolerance, NaN where the reference has NaN).
  static ::testing::AssertionResult close(const at::Tensor& got, const at::Tensor& want, Tolerance tol) {
    if (!got.is_cuda()) return ::testing::AssertionFailure() << "result is on " << got.device();
    if (got.sizes() != want.sizes()) {
      return ::testing::AssertionFailure() << "shape " << got.sizes() << ", expected " << want.sizes();
    }
    if (got.scalar_type() != want.scalar_type()) {
      return ::testing::AssertionFailure() << "dtype " << got.scalar_type() << ", expected " << want.scalar_type();
    }
    if (got.numel() == 0) return ::testing::AssertionSuccess();
    const at::Tensor g = got.to(at::kDouble), w = want.to(at::kDouble);
    const at::Tensor bad = g.isclose(w, tol.rtol, tol.atol, /*equal_nan=*/true).logical_not();
    const int64_t count = bad.sum().item<int64_t>();
    if (count == 0) return ::testing::AssertionSuccess();
    const int64_t first = bad.flatten().nonzero()[0].item<int64_t>();
    return ::testing::AssertionFailure() << count << " of " << got.numel() << " elements differ beyond rtol "
                                         << tol.rtol << ", atol " << tol.atol << "; first at flat index " << first
                                         << ": got " << g.flatten()[first].item<double>() << ", expected "
                                         << w.flatten()[first].item<double>() << "; max abs error "
                                         << (g - w).abs().nan_to_num(0).max().item<double>();
  }

 private:
  std::optional<::testing::ScopedTrace> trace_;
};

}  // namespace tritonrt::test

// Pieces every operator uses: its kernels, argument checks with aten's wording, the
// compute dtypes, and new output tensors.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>
#include <c10/core/SymInt.h>

#include <cstdint>
#include <initializer_list>
#include <string>

#include "layout.h"
#include "tritonrt/torch.h"

namespace tritonrt::ops {

inline constexpr const char* kElementwise = "tritonrt_elementwise.py";
inline constexpr const char* kReduction = "tritonrt_reduction.py";
inline constexpr const char* kLayerNorm = "tritonrt_layer_norm.py";
inline constexpr const char* kMatmul = "tritonrt_matmul.py";

/// Kernel `name` of the operator kernel file `file` (found beside the library).
JitFunction& kernel(const char* file, const char* name);

/// An operator's argument error, worded as aten words its own: "tritonrt::add: ...".
[[noreturn]] void fail(const char* op, const std::string& problem);

/// Shapes as "[2, 3]" (symbolic sizes as "s?").
std::string str(at::IntArrayRef sizes);
std::string str(c10::SymIntArrayRef sizes);

inline Dims dims(at::IntArrayRef values) { return Dims(values.data(), values.size()); }

/// Inputs of the arithmetic kernels: any dtype Triton has (fp8 included: it is converted).
void check_input(c10::ScalarType t, const char* op, const char* param);
/// Results of the arithmetic kernels: any dtype Triton has but fp8, which has no arithmetic
/// in aten either.
void check_result(c10::ScalarType t, const char* op);
/// A floating-point tensor (Half, BFloat16, Float or Double).
void check_float(const at::Tensor& t, const char* op, const char* name);

/// The type arithmetic and accumulation run in, as aten's opmath / accumulate types: fp32
/// for 16-bit floats, fp64 for double, and int64 for integers and bool (wrapping like the
/// narrow type, then stored back narrowed).
DType compute_dtype(c10::ScalarType t);

/// The Meta kernels' counterpart of torch::TensorChecks' device rules, so that tracing refuses
/// what running would: no CPU tensor (the CUDA kernels take none), and every tensor on the
/// first one's device (meta, or a fake tensor's CUDA device). Null entries (absent optional
/// tensors) are skipped.
struct MetaArg {
  const at::Tensor* tensor;
  const char* name;
};
void check_meta_devices(const char* op, std::initializer_list<MetaArg> args);

/// A new contiguous tensor on the scope's device, from torch's caching allocator.
at::Tensor new_cuda_tensor(const torch::DeviceScope& scope, at::IntArrayRef sizes, c10::ScalarType dtype);
/// The Meta kernels' output.
at::Tensor new_meta_tensor(c10::SymIntArrayRef sizes, c10::ScalarType dtype);

}  // namespace tritonrt::ops

#include "support.h"

#include <ATen/Context.h>
#include <ATen/EmptyTensor.h>
#include <ATen/cuda/CUDAContextLight.h>
#include <ATen/ops/empty.h>
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

namespace tritonrt::ops {
namespace {

// The kernel directory: $TRITONRT_OPS_KERNELS, else kernels/ beside this library (in the
// build tree and installed alike: both hold it in the tritonrt package's ops/ folder).
std::string find_kernels() {
  if (const char* dir = std::getenv("TRITONRT_OPS_KERNELS"); dir != nullptr && *dir != '\0') return dir;
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&find_kernels), &info) == 0 || info.dli_fname == nullptr) {
    throw SourceError(
        "tritonrt ops: cannot find the path of the ops library to locate its kernels; "
        "set TRITONRT_OPS_KERNELS to the kernel directory");
  }
  const auto dir = std::filesystem::absolute(info.dli_fname).parent_path() / "kernels";
  if (!std::filesystem::is_regular_file(dir / kElementwise)) {
    throw SourceError("tritonrt ops: the kernel files are not in " + dir.string() +
                      "; set TRITONRT_OPS_KERNELS to their directory");
  }
  return dir.string();
}

// Shapes built without iostreams: on the H200 machine, inserting a SymInt into a stream
// this library constructed crashed inside libstdc++ (seen twice, cause not pinned).
std::string dim_text(std::int64_t v) { return std::to_string(v); }
std::string dim_text(const c10::SymInt& v) {
  const auto concrete = v.maybe_as_int();
  return concrete ? std::to_string(*concrete) : "s?";  // a symbolic size under tracing
}

template <class Sizes>
std::string sizes_text(const Sizes& sizes) {
  std::string text = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + dim_text(sizes[i]);
  return text + "]";
}

bool is_float(c10::ScalarType t) {
  using S = c10::ScalarType;
  return t == S::Half || t == S::BFloat16 || t == S::Float || t == S::Double;
}

}  // namespace

JitFunction& kernel(const char* file, const char* name) {
  static const std::string dir = find_kernels();
  return JitFunction::get(dir + "/" + file, name);
}

void fail(const char* op, const std::string& problem) { throw ArgumentError(std::string(op) + ": " + problem); }

std::string str(at::IntArrayRef sizes) { return sizes_text(sizes); }
std::string str(c10::SymIntArrayRef sizes) { return sizes_text(sizes); }

void check_input(c10::ScalarType t, const char* op, const char* param) { (void)torch::checked_dtype(t, op, param); }

void check_result(c10::ScalarType t, const char* op) {
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

DType compute_dtype(c10::ScalarType t) {
  if (t == c10::ScalarType::Double) return DType::fp64;
  if (c10::isFloatingType(t)) return DType::fp32;
  return DType::i64;
}

// CUDA tensors can exist before torch has set CUDA up (from_blob), so the allocator is
// initialized first, as at::empty does; it serves the current device, the scope's.
at::Tensor new_cuda_tensor(const torch::DeviceScope&, at::IntArrayRef sizes, c10::ScalarType dtype) {
  at::globalContext().lazyInitDevice(c10::DeviceType::CUDA);
  return at::detail::empty_generic(sizes, at::cuda::getCUDADeviceAllocator(),
                                   c10::DispatchKeySet(c10::DispatchKey::CUDA), dtype, std::nullopt);
}

void check_meta_devices(const char* op, std::initializer_list<MetaArg> args) {
  const MetaArg* first = nullptr;
  for (const MetaArg& arg : args) {
    if (arg.tensor == nullptr || !arg.tensor->defined()) continue;
    const c10::Device device = arg.tensor->device();
    if (device.is_cpu()) {
      fail(op,
           std::string("argument '") + arg.name + "' is a CPU tensor; tritonrt launches kernels on CUDA tensors only");
    }
    if (first == nullptr) {
      first = &arg;
    } else if (device != first->tensor->device()) {
      fail(op, std::string("argument '") + arg.name + "' is on " + device.str() + " but argument '" + first->name +
                   "' is on " + first->tensor->device().str() + "; the tensors must be on one device");
    }
  }
}

at::Tensor new_meta_tensor(c10::SymIntArrayRef sizes, c10::ScalarType dtype) {
  return at::empty_symint(sizes, at::TensorOptions().dtype(dtype).device(c10::DeviceType::Meta));
}

}  // namespace tritonrt::ops

// The torch adapter's compiled half: argument checks with their messages, the device guard
// and stream of a launch, and kernel scratch memory from torch's caching allocator.

#include "tritonrt/torch.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>

#include <memory>
#include <string>

#include "common/errors.h"

namespace tritonrt::torch {
namespace {

// The caching allocator's blocks are aligned to 512 bytes (kMinBlockSize).
constexpr std::size_t kCachingAllocatorAlignment = 512;

// Scratch from torch's caching allocator: reused across launches without driver calls, and
// under CUDA graph capture taken from the graph's private pool like any tensor's memory.
// It allocates on the current device, which launch() sets to the tensors' device.
class CachingScratchAllocator final : public ScratchAllocator {
 public:
  void* allocate(std::size_t bytes, std::size_t alignment, void* stream) override {
    if (alignment > kCachingAllocatorAlignment) {
      tritonrt::detail::raise<ResourceError>(
          {}, "kernel scratch alignment {} exceeds the {} bytes torch's caching allocator guarantees", alignment,
          kCachingAllocatorAlignment);
    }
    return c10::cuda::CUDACachingAllocator::raw_alloc_with_stream(bytes, static_cast<cudaStream_t>(stream));
  }
  // The block returns to the pool of the stream it was allocated on, so the launch enqueued
  // there before this call is ordered before any reuse.
  void release(void* pointer, void*) noexcept override {
    try {
      c10::cuda::CUDACachingAllocator::raw_delete(pointer);
    } catch (...) {  // a destructor-like path: never throw
    }
  }
};

// What Python code around a kernel reads of a tensor argument: sizes, strides, device and
// the bytes from its first element to one past its last.
void inspect_tensor(const void* object, TensorShape& shape) {
  const auto& t = *static_cast<const at::Tensor*>(object);
  shape.device = t.device().index();
  if (t.dim() > TensorShape::kMaxDims) return;  // dims stays -1: unknown
  shape.dims = static_cast<int>(t.dim());
  std::int64_t last = 0;
  bool empty = false;
  for (int d = 0; d < shape.dims; ++d) {
    shape.sizes[d] = t.size(d);
    shape.strides[d] = t.stride(d);
    empty = empty || t.size(d) == 0;
    last += (t.size(d) - 1) * t.stride(d);
  }
  shape.bytes = empty ? 0 : static_cast<std::size_t>(last + 1) * t.element_size();
}

// Installed when the adapter is loaded, so every launch in a torch process uses torch's pool
// and decorators see tensors as tensors.
[[maybe_unused]] const bool kInstalled = [] {
  set_scratch_allocator(std::make_shared<CachingScratchAllocator>());
  set_tensor_inspector(&inspect_tensor);
  return true;
}();

}  // namespace

TensorChecks& TensorChecks::required(const at::Tensor& tensor, std::string_view param) {
  if (!tensor.defined()) [[unlikely]] {
    fail(param, "is an undefined tensor; a defined CUDA tensor is required");
  }
  const c10::Device device = tensor.device();
  if (!device.is_cuda()) [[unlikely]] {
    fail(param, device.is_cpu() ? "is a CPU tensor; tritonrt launches kernels on CUDA tensors only"
                                : "is on device " + device.str() + "; tritonrt launches kernels on CUDA tensors only");
  }
  if (device_ < 0) {
    device_ = device.index();
  } else if (device.index() != device_) [[unlikely]] {
    fail(param, "is on " + device.str() + " but the tensor arguments before it are on " +
                    c10::Device(c10::DeviceType::CUDA, device_).str());
  }
  if (!to_dtype(tensor.scalar_type())) [[unlikely]] {
    fail(param, std::string("has dtype ") + c10::toString(tensor.scalar_type()) + ", which Triton has no type for");
  }
  return *this;
}

void TensorChecks::fail(std::string_view param, const std::string& problem) const {
  // A kernel's parameters in tritonrt's format; an operator's arguments as aten words them.
  tritonrt::detail::raise<ArgumentError>({.kernel = owner_, .param = param, .op = !kernel_}, problem);
}

DType checked_dtype(c10::ScalarType type, std::string_view owner, std::string_view param) {
  if (const auto dtype = to_dtype(type)) [[likely]]
    return *dtype;
  tritonrt::detail::raise<ArgumentError>({.kernel = owner, .param = param, .op = true},
                                         "has dtype {}, which Triton has no type for", c10::toString(type));
}

TensorDescriptor descriptor(const at::Tensor& t, std::span<const std::int64_t> block_shape,
                            TensorDescriptor::Padding padding) {
  const DType dtype = detail::tensor_dtype(t);
  if (!t.is_cuda()) {
    tritonrt::detail::raise<ArgumentError>({}, "tensor descriptor: the tensor is on {}; a descriptor needs CUDA memory",
                                           t.device().str());
  }
  const auto sizes = t.sizes();
  const auto strides = t.strides();
  return TensorDescriptor::make(t.data_ptr(), dtype, std::span<const std::int64_t>(sizes.data(), sizes.size()),
                                std::span<const std::int64_t>(strides.data(), strides.size()), block_shape, padding);
}

DeviceScope::DeviceScope(c10::DeviceIndex device) : device_(device) {
  if (device < 0) tritonrt::detail::raise<ArgumentError>({}, "DeviceScope needs a CUDA device index, got {}", device);
  // torch's current device, which includes a switch it deferred (set_device to a device
  // without a context yet): then ExchangeDevice drops that switch for the scope, and the
  // destructor defers it again, as CUDAGuard does.
  c10::DeviceIndex current = -1;
  C10_CUDA_CHECK(c10::cuda::GetDevice(&current));
  if (current != device) previous_ = c10::cuda::ExchangeDevice(device);
}

DeviceScope::~DeviceScope() {
  if (previous_ >= 0) C10_CUDA_CHECK_WARN(c10::cuda::MaybeSetDevice(previous_));
}

namespace detail {

void throw_undefined_tensor() {
  tritonrt::detail::raise<ArgumentError>(
      {}, "an undefined at::Tensor cannot be a kernel argument (pass std::nullopt for None)");
}

void throw_unsupported_dtype(c10::ScalarType type) {
  tritonrt::detail::raise<ArgumentError>({}, "torch dtype {} has no Triton type", c10::toString(type));
}

void throw_unsupported_scalar(const c10::Scalar& value) {
  tritonrt::detail::raise<ArgumentError>(
      {}, "a {} c10::Scalar cannot be a kernel argument; Triton takes bool, int and float scalars",
      (value.isComplex() ? "complex" : "symbolic"));
}

// The device matters to a launch on the legacy default stream (it runs in the current
// context) and to scratch allocations (torch's allocator serves the current device).
void launch_on_device(JitFunction& fn, LaunchConfig& config, c10::DeviceIndex device, std::span<const Arg> args) {
  if (device < 0) device = c10::cuda::current_device();
  const DeviceScope scope(device);
  launch_in_scope(fn, config, scope, device, args);
}

void launch_in_scope(JitFunction& fn, LaunchConfig& config, const DeviceScope& scope, c10::DeviceIndex device,
                     std::span<const Arg> args) {
  if (device >= 0 && device != scope.device()) [[unlikely]] {
    tritonrt::detail::raise<ArgumentError>({fn.signature().name}, "its tensors are on {} but the DeviceScope is for {}",
                                           c10::Device(c10::DeviceType::CUDA, device).str(),
                                           c10::Device(c10::DeviceType::CUDA, scope.device()).str());
  }
  if (config.stream == nullptr) config.stream = c10::cuda::getCurrentCUDAStream(scope.device()).stream();
  fn.launch_packed(config, args);
}

}  // namespace detail
}  // namespace tritonrt::torch

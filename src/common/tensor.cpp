#include <atomic>

#include "tritonrt/arg.h"

namespace tritonrt {
namespace {

std::atomic<TensorInspector> installed{nullptr};

}  // namespace

void set_tensor_inspector(TensorInspector inspector) noexcept { installed.store(inspector, std::memory_order_release); }

TensorInspector tensor_inspector() noexcept { return installed.load(std::memory_order_acquire); }

}  // namespace tritonrt

#include "launch/scratch.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "common/errors.h"
#include "driver/driver.h"

namespace tritonrt {
namespace detail {
namespace {

// The driver's stream-ordered allocator: valid under graph capture (it becomes graph nodes).
class DriverScratchAllocator final : public ScratchAllocator {
 public:
  void* allocate(std::size_t bytes, std::size_t alignment, void* stream) override {
    auto& d = Driver::get();
    if (alignment > 256) {
      raise<ResourceError>(
          {},
          "kernel scratch alignment {} exceeds the 256 bytes cuMemAllocAsync guarantees; install a ScratchAllocator",
          alignment);
    }
    CUdeviceptr p = 0;
    TRITONRT_CU_CHECK(d, cuMemAllocAsync(&p, bytes, static_cast<CUstream>(stream)),
                      "allocating " + std::to_string(bytes) + " bytes of kernel scratch memory");
    return reinterpret_cast<void*>(p);
  }
  void release(void* pointer, void* stream) noexcept override {
    (void)Driver::get().cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(pointer), static_cast<CUstream>(stream));
  }
};

struct AllocatorSlot {
  std::mutex mutex;
  std::vector<std::shared_ptr<ScratchAllocator>> keep_alive;  // replaced ones may still be in use
  std::atomic<ScratchAllocator*> current{nullptr};

  AllocatorSlot() {
    keep_alive.push_back(std::make_shared<DriverScratchAllocator>());
    current.store(keep_alive.back().get());
  }
};

AllocatorSlot& allocator_slot() {
  static AllocatorSlot slot;
  return slot;
}

}  // namespace

void* ScratchLease::acquire(std::size_t bytes, std::size_t alignment) {
  if (allocator_ == nullptr) allocator_ = allocator_slot().current.load(std::memory_order_acquire);
  void* p = allocator_->allocate(bytes, alignment, stream_);
  held_[count_++] = p;
  return p;
}

ScratchLease::~ScratchLease() {
  for (int i = 0; i < count_; ++i) allocator_->release(held_[i], stream_);
}

}  // namespace detail

void set_scratch_allocator(std::shared_ptr<ScratchAllocator> allocator) {
  auto& slot = detail::allocator_slot();
  std::lock_guard lock(slot.mutex);
  if (allocator == nullptr) allocator = slot.keep_alive.front();
  slot.keep_alive.push_back(allocator);
  slot.current.store(allocator.get(), std::memory_order_release);
}

}  // namespace tritonrt

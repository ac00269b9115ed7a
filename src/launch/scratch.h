// Scratch memory of a launch (Triton's global and profile scratch): the process's allocator
// and the lease that gives a launch's buffers back, also when the launch throws.
#pragma once

#include <cstddef>

#include "tritonrt/launch.h"

namespace tritonrt::detail {

/// The scratch buffers of one launch, released (stream-ordered) when it ends, also when a
/// later allocation or the launch itself throws.
class ScratchLease {
 public:
  explicit ScratchLease(void* stream) noexcept : stream_(stream) {}
  void* acquire(std::size_t bytes, std::size_t alignment);
  ~ScratchLease();
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;

 private:
  void* stream_;
  ScratchAllocator* allocator_ = nullptr;
  void* held_[2] = {nullptr, nullptr};
  int count_ = 0;
};

}  // namespace tritonrt::detail

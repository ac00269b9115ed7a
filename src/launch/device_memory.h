// Device memory work on a stream, for what surrounds a launch (an autotuner's
// reset_to_zero and restore_value): zeroing, copying, a stream-ordered buffer.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tritonrt::detail {

/// Zeroes `bytes` at `address`, in order on `stream`.
void zero_async(std::uint64_t address, std::size_t bytes, void* stream);
/// Copies `bytes` from `source` to `target`, in order on `stream`.
void copy_async(std::uint64_t target, std::uint64_t source, std::size_t bytes, void* stream);
/// Whether `stream` is capturing a CUDA graph (work that waits on the stream cannot run then).
bool is_capturing(void* stream);

/// Device memory allocated and freed in order on one stream.
class StreamBuffer {
 public:
  StreamBuffer(std::size_t bytes, void* stream);
  ~StreamBuffer();
  StreamBuffer(const StreamBuffer&) = delete;
  StreamBuffer& operator=(const StreamBuffer&) = delete;
  std::uint64_t address() const noexcept { return address_; }

 private:
  void* stream_;
  std::uint64_t address_ = 0;
};

}  // namespace tritonrt::detail

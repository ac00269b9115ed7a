#include "launch/device_memory.h"

#include <string>

#include "driver/driver.h"

namespace tritonrt::detail {

void zero_async(std::uint64_t address, std::size_t bytes, void* stream) {
  TRITONRT_CU_CHECK(Driver::get(), cuMemsetD8Async(address, 0, bytes, static_cast<CUstream>(stream)),
                    "zeroing " + std::to_string(bytes) + " bytes");
}

void copy_async(std::uint64_t target, std::uint64_t source, std::size_t bytes, void* stream) {
  TRITONRT_CU_CHECK(Driver::get(), cuMemcpyDtoDAsync(target, source, bytes, static_cast<CUstream>(stream)),
                    "copying " + std::to_string(bytes) + " bytes");
}

bool is_capturing(void* stream) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  TRITONRT_CU_CHECK(Driver::get(), cuStreamIsCapturing(static_cast<CUstream>(stream), &status),
                    "asking whether a stream is capturing");
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

StreamBuffer::StreamBuffer(std::size_t bytes, void* stream) : stream_(stream) {
  CUdeviceptr address = 0;
  TRITONRT_CU_CHECK(Driver::get(), cuMemAllocAsync(&address, bytes, static_cast<CUstream>(stream)),
                    "allocating " + std::to_string(bytes) + " bytes of device memory");
  address_ = address;
}

StreamBuffer::~StreamBuffer() {
  (void)Driver::get().cuMemFreeAsync(static_cast<CUdeviceptr>(address_), static_cast<CUstream>(stream_));
}

}  // namespace tritonrt::detail

// Enqueueing a loaded kernel: grid checks, scratch pointers and launch attributes as
// Triton's launcher sets them, then the driver call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "driver/driver.h"
#include "launch/context.h"
#include "launch/module.h"
#include "tritonrt/launch.h"
#include "tritonrt/tensor_descriptor.h"

namespace tritonrt::detail {

/// The most runtime arguments a launch passes (the kernel's own, before descriptors expand).
inline constexpr std::size_t kMaxKernelParams = 256;

/// Every launch `launch_kernel` does not do inline: kernels with scratch memory, launch
/// attributes or tensor descriptors (expanded here: `params` holds a TensorDescriptor* in
/// each descriptor's place), empty grids (nothing is launched, as in Triton), and grids out
/// of range.
void launch_kernel_general(const ModuleFunction& k, const DeviceContext& dc, const Grid& grid, void** params,
                           std::size_t count, void* stream, std::string_view kernel);

/// Encodes the CUtensorMap a TMA kernel reads for descriptor `d` (`shape`: the sizes the kernel
/// takes, fp4 padding applied), as Triton's launcher encodes it; throws DriverError when the
/// driver refuses it. A launch does this for each descriptor its thread has not encoded lately.
void encode_tensor_map(CUtensorMap& map, const TensorDescriptor& d, const TensorDescriptorMeta& m,
                       std::span<const std::int64_t> shape, std::string_view kernel);

/// Throws the DriverError of a failed launch.
[[noreturn]] [[gnu::cold]] void launch_failed(CUresult result, std::string_view kernel);

/// Launches `k` on `stream` in `dc`'s context. `params` holds the runtime arguments'
/// pointers (`count` of them) and has room for the two scratch pointers appended here.
/// Inline for the common kernel (no scratch, no launch attributes) on a grid in range.
[[gnu::always_inline]] inline void launch_kernel(const ModuleFunction& k, const DeviceContext& dc, const Grid& grid,
                                                 void** params, std::size_t count, void* stream,
                                                 std::string_view kernel) {
  const bool in_range = grid.x > 0 && grid.y > 0 && grid.z > 0 && grid.x <= dc.max_grid[0] &&
                        grid.y <= dc.max_grid[1] && grid.z <= dc.max_grid[2];
  if (!k.plain || !in_range) [[unlikely]] {
    launch_kernel_general(k, dc, grid, params, count, stream, kernel);
    return;
  }
  // No scratch: both scratch pointers are null, read from here.
  static constexpr std::uint64_t kNoScratch = 0;
  params[count] = params[count + 1] = const_cast<std::uint64_t*>(&kNoScratch);
  const CUresult result = Driver::get().cuLaunchKernel(
      k.function, static_cast<unsigned>(grid.x), static_cast<unsigned>(grid.y), static_cast<unsigned>(grid.z),
      k.block_x, 1, 1, k.shared, static_cast<CUstream>(stream), params, nullptr);
  if (result != CUDA_SUCCESS) [[unlikely]]
    launch_failed(result, kernel);
}

}  // namespace tritonrt::detail

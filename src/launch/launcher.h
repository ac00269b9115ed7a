// Enqueueing a loaded kernel: grid checks, scratch pointers and launch attributes as
// Triton's launcher sets them, then the driver call.
#pragma once

#include <cstddef>
#include <string_view>

#include "launch/context.h"
#include "launch/module.h"
#include "tritonrt/launch.h"

namespace tritonrt::detail {

/// Launches `k` on `stream` in `dc`'s context. `params` holds the runtime arguments'
/// pointers (`count` of them) and has room for the two scratch pointers appended here.
/// A grid with a zero dimension launches nothing, as in Triton.
void launch_kernel(const LoadedFunction& k, const DeviceContext& dc, const Grid& grid, void** params,
                   std::size_t count, void* stream, std::string_view kernel);

}  // namespace tritonrt::detail

#include "launch/launcher.h"

#include <cstdint>

#include "common/errors.h"
#include "driver/driver.h"
#include "launch/scratch.h"

namespace tritonrt::detail {
namespace {

[[noreturn]] [[gnu::cold]] void grid_error(const Grid& grid, const ModuleFunction& k, const DeviceContext& dc,
                                           std::string_view kernel) {
  if (grid.x < 0 || grid.y < 0 || grid.z < 0) raise<ArgumentError>({kernel}, "grid dimensions must not be negative");
  raise<ArgumentError>({kernel}, "grid ({}, {}, {}) with num_ctas {} exceeds the device's limits ({}, {}, {})", grid.x,
                       grid.y, grid.z, k.num_ctas, dc.max_grid[0], dc.max_grid[1], dc.max_grid[2]);
}

// The launch attributes Triton's launcher sets (PDL, cooperative grid, clusters), with
// cuLaunchKernelEx: only for kernels whose metadata asks for one of them.
[[gnu::cold]] CUresult launch_with_attributes(const ModuleFunction& k, unsigned gx, unsigned gy, unsigned gz,
                                              CUstream stream, void** params) {
  CUlaunchAttribute attrs[4];
  unsigned n = 0;
  if (k.launch_pdl) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attrs[n++].value.programmaticStreamSerializationAllowed = 1;
  }
  if (k.launch_cooperative_grid) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attrs[n++].value.cooperative = 1;
  }
  if (k.num_ctas != 1) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[n].value.clusterDim.x = static_cast<unsigned>(k.num_ctas);
    attrs[n].value.clusterDim.y = 1;
    attrs[n++].value.clusterDim.z = 1;
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
    attrs[n++].value.clusterSchedulingPolicyPreference = CU_CLUSTER_SCHEDULING_POLICY_SPREAD;
  }
  CUlaunchConfig config{};
  config.gridDimX = gx;
  config.gridDimY = gy;
  config.gridDimZ = gz;
  config.blockDimX = k.block_x;
  config.blockDimY = 1;
  config.blockDimZ = 1;
  config.sharedMemBytes = k.shared;
  config.hStream = stream;
  config.attrs = attrs;
  config.numAttrs = n;
  return Driver::get().cuLaunchKernelEx(&config, k.function, params, nullptr);
}

}  // namespace

void launch_failed(CUresult result, std::string_view kernel) {
  Driver::get().fail(result, "cuLaunchKernel", "launching kernel '" + std::string(kernel) + "'");
}

void launch_kernel_general(const ModuleFunction& k, const DeviceContext& dc, const Grid& grid, void** params,
                           std::size_t count, void* stream, std::string_view kernel) {
  if (grid.x <= 0 || grid.y <= 0 || grid.z <= 0) [[unlikely]] {
    if (grid.x < 0 || grid.y < 0 || grid.z < 0) grid_error(grid, k, dc, kernel);
    return;  // Triton launches nothing for an empty grid
  }
  if (grid.x * k.num_ctas > dc.max_grid[0] || grid.y > dc.max_grid[1] || grid.z > dc.max_grid[2]) [[unlikely]] {
    grid_error(grid, k, dc, kernel);
  }
  // After the runtime arguments: the global and profile scratch pointers, null unless the
  // metadata asks for scratch (then one buffer per program, released after the launch).
  std::uint64_t scratch_slots[2] = {0, 0};
  ScratchLease scratch(stream);
  const std::int64_t sizes[2] = {k.global_scratch_size, k.profile_scratch_size};
  if ((sizes[0] | sizes[1]) != 0) [[unlikely]] {
    const std::int64_t programs = grid.x * grid.y * grid.z * k.num_ctas;
    const std::int64_t aligns[2] = {k.global_scratch_align, k.profile_scratch_align};
    for (int s = 0; s < 2; ++s) {
      if (sizes[s] <= 0) continue;
      void* buffer =
          scratch.acquire(static_cast<std::size_t>(programs * sizes[s]), static_cast<std::size_t>(aligns[s]));
      scratch_slots[s] = reinterpret_cast<std::uint64_t>(buffer);
    }
  }
  params[count] = &scratch_slots[0];
  params[count + 1] = &scratch_slots[1];

  auto& d = Driver::get();
  const auto gx = static_cast<unsigned>(grid.x * k.num_ctas);
  const auto gy = static_cast<unsigned>(grid.y);
  const auto gz = static_cast<unsigned>(grid.z);
  const auto cu_stream = static_cast<CUstream>(stream);
  const CUresult result =
      !k.launch_pdl && !k.launch_cooperative_grid && k.num_ctas == 1
          ? d.cuLaunchKernel(k.function, gx, gy, gz, k.block_x, 1, 1, k.shared, cu_stream, params, nullptr)
          : launch_with_attributes(k, gx, gy, gz, cu_stream, params);
  if (result != CUDA_SUCCESS) [[unlikely]]
    launch_failed(result, kernel);
}

}  // namespace tritonrt::detail

// Loading a compiled kernel into a device context, checked against the device as Triton's
// loader checks it, and what a launch of it needs, read once.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string_view>

#include "launch/context.h"
#include "tritonrt/artifact.h"

namespace tritonrt::detail {

/// A module loaded in one context; unloaded when the owner goes away (errors ignored).
struct ModuleHandle {
  CUmodule module = nullptr;
  explicit ModuleHandle(CUmodule m) noexcept : module(m) {}
  ModuleHandle(const ModuleHandle&) = delete;
  ModuleHandle& operator=(const ModuleHandle&) = delete;
  ~ModuleHandle();
};

/// What a launch needs, read once from the artifact and the loaded function.
struct ModuleFunction {
  CUfunction function = nullptr;
  unsigned block_x = 0;
  unsigned shared = 0;
  int num_ctas = 1;
  bool launch_pdl = false;
  bool launch_cooperative_grid = false;
  bool plain = true;  ///< no scratch and no launch attributes: the inline launch suffices
  std::int64_t global_scratch_size = 0;
  std::int64_t global_scratch_align = 1;
  std::int64_t profile_scratch_size = 0;
  std::int64_t profile_scratch_align = 1;
  std::shared_ptr<const Artifact> artifact;
  std::unique_ptr<ModuleHandle> module;
};

/// Loads `artifact` into `dc`'s context; throws TargetError for a binary of another
/// backend, ResourceError when the device cannot run it, DriverError when loading fails.
ModuleFunction load_function(const DeviceContext& dc, std::shared_ptr<const Artifact> artifact,
                             std::string_view kernel);

}  // namespace tritonrt::detail

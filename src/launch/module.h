// Loading a compiled kernel into a device context, checked against the device as Triton's
// loader checks it, and what a launch of it needs, read once.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "common/specialization.h"
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

/// The most tensor-descriptor parameters a kernel tritonrt launches may take.
inline constexpr std::size_t kMaxDescriptors = 16;

/// One tensor-descriptor parameter, as the compiled kernel takes it.
struct DescriptorParam {
  std::size_t position = 0;  ///< among the runtime arguments, tuples flattened as Triton's launcher does
  int rank = 0;
  /// The CUtensorMap to encode (in the artifact's metadata), or null: the kernel takes the
  /// descriptor's base address, shape and strides instead (no TMA on its target).
  const TensorDescriptorMeta* tma = nullptr;
  int flags = 1;  ///< without TMA: the i1 flags after the strides (SpecializationRules::descriptor_flags)
};

/// What a launch needs, read once from the artifact and the loaded function.
struct ModuleFunction {
  CUfunction function = nullptr;
  unsigned block_x = 0;
  unsigned shared = 0;
  int num_ctas = 1;
  bool launch_pdl = false;
  bool launch_cooperative_grid = false;
  bool plain = true;  ///< no scratch, launch attributes or descriptors: the inline launch suffices
  std::int64_t global_scratch_size = 0;
  std::int64_t global_scratch_align = 1;
  std::int64_t profile_scratch_size = 0;
  std::int64_t profile_scratch_align = 1;
  std::vector<DescriptorParam> descriptors;  ///< expanded at launch as Triton's launcher does
  std::shared_ptr<const Artifact> artifact;
  std::unique_ptr<ModuleHandle> module;
};

/// Loads `artifact` into `dc`'s context; throws TargetError for a binary of another
/// backend, ResourceError when the device cannot run it, DriverError when loading fails, and
/// ArgumentError for a descriptor inside a tuple where `rules` (those of the Triton that
/// compiled it) say its launcher cannot launch one.
ModuleFunction load_function(const DeviceContext& dc, std::shared_ptr<const Artifact> artifact,
                             const KernelSignature& signature, const SpecializationRules& rules);

}  // namespace tritonrt::detail

// The reference every launch benchmark compares with: a kernel launched the bare way, its
// cubin loaded by hand and cuLaunchKernel given the parameters tritonrt and Triton pass (the
// runtime arguments, then the global and profile scratch pointers, both null: only kernels
// without scratch), prepared once. A descriptor's CUtensorMap is encoded here once, with
// tritonrt's own encoding and the box the compiled kernel loads (its metadata's), so a
// placeholder block shape a config's pre_hook would set is launched with the tiles compiled.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "bench_support.h"
#include "launch/launcher.h"
#include "tritonrt/tritonrt.h"

namespace tritonrt::bench {

class BareLaunch {
 public:
  template <class... Args>
  BareLaunch(const tritonrt::Artifact& artifact, CUstream stream, tritonrt::Grid grid, const Args&... args)
      : stream_(stream), grid_(grid) {
    const auto& m = artifact.metadata;
    if (m.global_scratch_size > 0 || m.profile_scratch_size > 0 || m.num_ctas != 1 || m.launch_pdl ||
        m.launch_cooperative_grid) {
      throw std::runtime_error("the bare launch supports only kernels without scratch, clusters or launch attributes");
    }
    const auto& params = artifact.specialization.params;
    // One value per parameter, constexprs included (skipped: they are compiled in).
    if (params.size() != sizeof...(Args)) throw std::runtime_error("argument count differs from the kernel's");
    std::size_t index = 0;
    (add(artifact, params[index++].type, args), ...);
    slots_.push_back(0);  // global scratch
    slots_.push_back(0);  // profile scratch
    std::size_t slot = 0, map = 0;
    for (const bool is_map : order_) pointers_.push_back(is_map ? static_cast<void*>(&maps_[map++]) : &slots_[slot++]);
    while (slot < slots_.size()) pointers_.push_back(&slots_[slot++]);
    CHECK_CU(cuModuleLoadData(&module_, artifact.binary.data()));
    CHECK_CU(cuModuleGetFunction(&function_, module_, m.name.c_str()));
    block_ = static_cast<unsigned>(m.num_warps * m.target.warp_size);
    shared_ = static_cast<unsigned>(m.shared);
    if (shared_ > 49152) {  // beyond 48 KiB, dynamic shared memory is opted into, as tritonrt's loader does
      TRITONRT_CU_CHECK(tritonrt::detail::Driver::get(),
                        cuFuncSetAttribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           static_cast<int>(shared_)),
                        "bare");
    }
  }
  ~BareLaunch() { (void)Driver::get().cuModuleUnload(module_); }
  BareLaunch(const BareLaunch&) = delete;
  BareLaunch& operator=(const BareLaunch&) = delete;

  void operator()() {
    CHECK_CU(cuLaunchKernel(function_, static_cast<unsigned>(grid_.x), static_cast<unsigned>(grid_.y),
                            static_cast<unsigned>(grid_.z), block_, 1, 1, shared_, stream_, pointers_.data(), nullptr));
  }

 private:
  void push(std::uint64_t value) {
    slots_.push_back(value);
    order_.push_back(false);
  }

  // One runtime argument in an 8-byte slot, typed as the specialization types it; a TMA
  // descriptor as the encoded map, its shape and strides.
  template <class T>
  void add(const tritonrt::Artifact& artifact, const std::string& type, const T& value) {
    if (type == "constexpr") return;  // compiled into the binary, not a parameter
    std::uint64_t slot = 0;
    if constexpr (std::is_same_v<T, tritonrt::TensorDescriptor>) {
      const auto& metas = artifact.metadata.tensordesc_meta;
      if (maps_.size() >= metas.size()) throw std::runtime_error("the bare launch takes TMA descriptors only");
      if (metas[maps_.size()].fp4_padded) throw std::runtime_error("the bare launch takes no fp4-padded descriptor");
      maps_.emplace_back();
      tritonrt::detail::encode_tensor_map(maps_.back(), value, metas[maps_.size() - 1], value.shape(), "bare");
      order_.push_back(true);
      for (const std::int64_t s : value.shape()) push(static_cast<std::uint64_t>(s));
      for (const std::int64_t s : value.strides()) push(static_cast<std::uint64_t>(s));
      return;
    } else if constexpr (std::is_pointer_v<T>) {
      if (type[0] != '*') throw std::runtime_error("expected a pointer parameter, the kernel has " + type);
      slot = reinterpret_cast<std::uintptr_t>(value);
    } else if constexpr (std::is_floating_point_v<T>) {
      if (type != "fp32") throw std::runtime_error("expected an fp32 parameter, the kernel has " + type);
      const float f = static_cast<float>(value);
      std::memcpy(&slot, &f, sizeof f);
    } else if constexpr (std::is_integral_v<T>) {
      // i1 to i64, u1 to u64: the kernel reads the slot's low bytes (little-endian).
      if (type.empty() || (type[0] != 'i' && type[0] != 'u')) {
        throw std::runtime_error("unexpected integer parameter type " + type);
      }
      slot = static_cast<std::uint64_t>(static_cast<std::int64_t>(value));
    } else {
      throw std::runtime_error("the bare launch takes no such argument for parameter type " + type);
    }
    push(slot);
  }

  CUstream stream_;
  tritonrt::Grid grid_;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  unsigned block_ = 0, shared_ = 0;
  std::vector<std::uint64_t> slots_;
  std::vector<CUtensorMap> maps_;  // pointers into it are taken once all are made
  std::vector<bool> order_;        // per parameter before the scratch ones: a map, or the next slot
  std::vector<void*> pointers_;
};

}  // namespace tritonrt::bench

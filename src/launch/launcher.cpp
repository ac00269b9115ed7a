#include "launch/launcher.h"

#include <algorithm>
#include <cstdint>
#include <span>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/errors.h"
#include "driver/driver.h"
#include "launch/scratch.h"
#include "tritonrt/tensor_descriptor.h"

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

// Triton numbers TMA element types differently on the device than cuda.h does on the host
// (its launcher's TMA_DTYPE_DEVICE_TO_HOST).
CUtensorMapDataType host_element_type(int device_type) {
  switch (device_type) {
    case 8:
      return static_cast<CUtensorMapDataType>(10);
    case 9:
      return static_cast<CUtensorMapDataType>(8);
    case 10:
      return static_cast<CUtensorMapDataType>(9);
    default:
      return static_cast<CUtensorMapDataType>(device_type);
  }
}

// The maps this thread encoded last, by everything they were encoded from: a launch with the
// same descriptor (base, shape, strides, padding) for a parameter of the same encoding copies
// the map instead of encoding it again (cuTensorMapEncodeTiled took about 0.16 us per map on
// an H100's host, 6% of a launch). Per thread: no lock, and a slot is rewritten only by its
// own thread's later launches.
struct EncodedMap {
  bool valid = false;
  int rank = 0;
  const void* base = nullptr;
  TensorDescriptor::Padding padding = TensorDescriptor::Padding::zero;
  int swizzle = 0, elem_size = 0, elem_type = 0;
  std::int64_t shape[TensorDescriptor::kMaxRank] = {};
  std::int64_t strides[TensorDescriptor::kMaxRank] = {};
  std::int64_t box[TensorDescriptor::kMaxRank] = {};
  CUtensorMap map{};

  bool holds(const TensorDescriptor& d, const TensorDescriptorMeta& m, std::span<const std::int64_t> sizes) const {
    if (!valid || base != d.base() || rank != d.rank() || padding != d.padding() || swizzle != m.swizzle ||
        elem_size != m.elem_size || elem_type != m.elem_type || sizes.size() != static_cast<std::size_t>(rank) ||
        m.block_size.size() != static_cast<std::size_t>(rank)) {
      return false;
    }
    // One pass over the three, element by element: at ranks 1-5 cheaper than calls of memcmp.
    const std::int64_t* given_strides = d.strides().data();
    std::uint64_t differ = 0;
    for (int i = 0; i < rank; ++i) {
      differ |= static_cast<std::uint64_t>((sizes[i] ^ shape[i]) | (given_strides[i] ^ strides[i]) |
                                           (m.block_size[i] ^ box[i]));
    }
    return differ == 0;
  }
};
// Searched whole, replaced oldest first: the descriptors of the few kernels a thread launches
// in turn all stay. The slots' bases sit together, in one cache line, so that the search
// rules out most slots without touching them (the driver's launch evicts them between calls).
// One thread-local object, constant-initialized: a launch looks it up once, and no access
// runs a thread-local initializer.
struct EncodedMaps {
  static constexpr std::size_t kSlots = 8;
  alignas(64) const void* bases[kSlots] = {};  // each valid slot's base, else null
  std::size_t next = 0;
  EncodedMap slots[kSlots] = {};

  // The map encoded from all that, or null.
  const CUtensorMap* find(const TensorDescriptor& d, const TensorDescriptorMeta& m,
                          std::span<const std::int64_t> shape) const {
    for (std::size_t i = 0; i < kSlots; ++i) {
      if (bases[i] == d.base() && slots[i].holds(d, m, shape)) return &slots[i].map;
    }
    return nullptr;
  }
  // Encodes the map into the oldest slot.
  const CUtensorMap& encode(const TensorDescriptor& d, const TensorDescriptorMeta& m,
                            std::span<const std::int64_t> shape, std::string_view kernel) {
    const std::size_t slot = next++ % kSlots;
    EncodedMap& e = slots[slot];
    e.valid = false;  // until the map is whole
    bases[slot] = nullptr;
    encode_tensor_map(e.map, d, m, shape, kernel);
    e.rank = d.rank();
    e.base = d.base();
    e.padding = d.padding();
    e.swizzle = m.swizzle;
    e.elem_size = m.elem_size;
    e.elem_type = m.elem_type;
    std::ranges::copy(shape, e.shape);
    std::ranges::copy(d.strides(), e.strides);
    std::ranges::copy(m.block_size, e.box);
    e.valid = true;
    bases[slot] = e.base;
    return e.map;
  }
};
constinit thread_local EncodedMaps encoded_maps;

// This thread's maps. Out of line: GCC computes a thread-local's address anew (a call into
// the dynamic linker, in a shared library) at each use inside a loop; a pointer it returned
// is an ordinary value.
[[gnu::noinline]] EncodedMaps* thread_encoded_maps() { return &encoded_maps; }

// A launch's parameters with each tensor descriptor expanded into the parameters the compiled
// kernel takes for it, as Triton's launcher expands them: a TMA kernel gets the encoded
// CUtensorMap, the shape (i32) and the strides (i64); any other the base address, shape and
// strides (i64), the NaN-padding flag (i1; from Triton 3.9 also round_f32_to_tf32), then the
// shape (i32) and strides (i64) again.
// A TMA descriptor's parameter points at the map in the thread's slot, which stays as it is
// while the driver reads it; before anything could encode into a slot (a miss in this launch,
// a scratch allocator that launches), the maps are copied here.
struct ExpandedParams {
  static constexpr std::size_t kWordsPerDescriptor = 1 + 4 * TensorDescriptor::kMaxRank + 2;
  std::uint64_t words[kMaxDescriptors][kWordsPerDescriptor];
  void* params[kMaxKernelParams + kMaxDescriptors * kWordsPerDescriptor + 2];
  std::size_t count = 0;
  std::size_t tma_count = 0;
  std::size_t map_param[kMaxDescriptors];  // by TMA descriptor: its map's index in params
  CUtensorMap maps[kMaxDescriptors];       // the copies

  void keep_copies() {
    for (std::size_t j = 0; j < tma_count; ++j) {
      if (params[map_param[j]] == &maps[j]) continue;
      maps[j] = *static_cast<const CUtensorMap*>(params[map_param[j]]);
      params[map_param[j]] = &maps[j];
    }
  }

  void expand(const ModuleFunction& k, void** given, std::size_t given_count, std::string_view kernel) {
    EncodedMaps* encoded = nullptr;  // looked up at the first TMA descriptor
    std::size_t next = 0;            // the next descriptor of k.descriptors
    for (std::size_t i = 0; i < given_count; ++i) {
      if (next == k.descriptors.size() || k.descriptors[next].position != i) {
        params[count++] = given[i];
        continue;
      }
      const DescriptorParam& p = k.descriptors[next];
      const auto& d = *static_cast<const TensorDescriptor*>(given[i]);
      std::uint64_t* w = words[next];
      std::size_t used = 0;
      auto word = [&](std::uint64_t value) {
        w[used] = value;  // the kernel reads its low bytes (i32, i1): little-endian
        params[count++] = &w[used++];
      };
      // The descriptor's own sizes, unless an fp4-padded map counts the last one twice.
      const std::int64_t* shape = d.shape().data();
      std::int64_t padded[TensorDescriptor::kMaxRank];
      if (p.tma != nullptr) {
        if (p.tma->fp4_padded) [[unlikely]] {
          for (int j = 0; j < p.rank; ++j) padded[j] = shape[j];
          padded[p.rank - 1] *= 2;
          shape = padded;
        }
        if (encoded == nullptr) encoded = thread_encoded_maps();
        const std::span<const std::int64_t> sizes(shape, p.rank);
        const CUtensorMap* map = encoded->find(d, *p.tma, sizes);
        if (map == nullptr) [[unlikely]] {
          keep_copies();
          map = &encoded->encode(d, *p.tma, sizes, kernel);
        }
        map_param[tma_count++] = count;
        params[count++] = const_cast<CUtensorMap*>(map);
      } else {
        word(reinterpret_cast<std::uintptr_t>(d.base()));
        for (int j = 0; j < p.rank; ++j) word(static_cast<std::uint64_t>(shape[j]));
        for (int j = 0; j < p.rank; ++j) word(static_cast<std::uint64_t>(d.strides()[j]));
        word(d.padding() == TensorDescriptor::Padding::nan ? 1 : 0);
        if (p.flags == 2) word(0);  // round_f32_to_tf32: tritonrt's descriptors do not round
      }
      for (int j = 0; j < p.rank; ++j) word(static_cast<std::uint64_t>(shape[j]));
      for (int j = 0; j < p.rank; ++j) word(static_cast<std::uint64_t>(d.strides()[j]));
      ++next;
    }
  }
};

// The launch of parameters ready for the kernel (descriptors expanded).
void launch_expanded(const ModuleFunction& k, const DeviceContext& dc, const Grid& grid, void** params,
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

}  // namespace

// As Triton's fill_tma_descriptor: dimensions innermost first, strides in bytes, the box the
// compiled kernel loads.
void encode_tensor_map(CUtensorMap& map, const TensorDescriptor& d, const TensorDescriptorMeta& m,
                       std::span<const std::int64_t> shape, std::string_view kernel) {
  const int rank = d.rank();
  cuuint64_t dims[TensorDescriptor::kMaxRank];
  cuuint64_t strides[TensorDescriptor::kMaxRank] = {};
  cuuint32_t box[TensorDescriptor::kMaxRank];
  const cuuint32_t element_strides[TensorDescriptor::kMaxRank] = {1, 1, 1, 1, 1};
  for (int i = 0; i < rank; ++i) {
    dims[rank - 1 - i] = static_cast<cuuint64_t>(shape[i]);
    box[rank - 1 - i] = static_cast<cuuint32_t>(m.block_size[i]);
  }
  for (int i = 0; i + 1 < rank; ++i) strides[rank - 2 - i] = static_cast<cuuint64_t>(m.elem_size * d.strides()[i]);
  const auto fill = d.padding() == TensorDescriptor::Padding::nan ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
                                                                   : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  auto& driver = Driver::get();
  const CUresult result = driver.cuTensorMapEncodeTiled(
      &map, host_element_type(m.elem_type), static_cast<cuuint32_t>(rank), const_cast<void*>(d.base()), dims, strides,
      box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, static_cast<CUtensorMapSwizzle>(m.swizzle),
      CU_TENSOR_MAP_L2_PROMOTION_L2_128B, fill);
  if (result != CUDA_SUCCESS) [[unlikely]] {
    driver.fail(result, "cuTensorMapEncodeTiled",
                fmt::format("encoding a tensor descriptor for kernel '{}' (base {}, shape [{}], strides [{}], box [{}], "
                            "element size {}, swizzle {})",
                            kernel, d.base(), fmt::join(shape, ", "), fmt::join(d.strides(), ", "),
                            fmt::join(m.block_size, ", "), m.elem_size, m.swizzle));
  }
}

void launch_failed(CUresult result, std::string_view kernel) {
  Driver::get().fail(result, "cuLaunchKernel", "launching kernel '" + std::string(kernel) + "'");
}

void launch_kernel_general(const ModuleFunction& k, const DeviceContext& dc, const Grid& grid, void** params,
                           std::size_t count, void* stream, std::string_view kernel) {
  if (!k.descriptors.empty()) {
    ExpandedParams expanded;
    expanded.expand(k, params, count, kernel);
    if ((k.global_scratch_size | k.profile_scratch_size) != 0) [[unlikely]] {
      expanded.keep_copies();  // an allocator may launch, and encode into the slots
    }
    launch_expanded(k, dc, grid, expanded.params, expanded.count, stream, kernel);
    return;
  }
  launch_expanded(k, dc, grid, params, count, stream, kernel);
}


}  // namespace tritonrt::detail

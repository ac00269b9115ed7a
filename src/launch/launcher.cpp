// The launch path: from a call's arguments to cuLaunchKernel, as Triton's own launcher does
// it for the installed version (parameters, scratch buffers, launch attributes).

#include <cmath>
#include <cstring>
#include <limits>

#include "driver/driver.h"
#include "function/jit_function_impl.h"
#include "function/specializer.h"
#include "launch/kernel_cache.h"
#include "tritonrt/error.h"
#include "tritonrt/launch.h"

namespace tritonrt {
namespace {

using detail::Driver;
using detail::DeviceContext;
using detail::ParamCode;
using detail::TypeCode;

// The driver's stream-ordered allocator: valid under graph capture (it becomes graph nodes).
class DriverScratchAllocator final : public ScratchAllocator {
 public:
  void* allocate(std::size_t bytes, std::size_t alignment, void* stream) override {
    auto& d = Driver::get();
    if (alignment > 256) {
      throw Error("tritonrt: scratch alignment " + std::to_string(alignment) +
                  " exceeds the 256 bytes cuMemAllocAsync guarantees; install a ScratchAllocator");
    }
    CUdeviceptr p = 0;
    TRITONRT_CU_CHECK(d, cuMemAllocAsync(&p, bytes, static_cast<CUstream>(stream)),
                      "allocating " + std::to_string(bytes) + " bytes of kernel scratch memory");
    return reinterpret_cast<void*>(p);
  }
  void release(void* pointer, void* stream) noexcept override {
    (void)Driver::get().cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(pointer), static_cast<CUstream>(stream));
  }
};

struct AllocatorSlot {
  std::mutex mutex;
  std::vector<std::shared_ptr<ScratchAllocator>> keep_alive;  // replaced ones may still be in use
  std::atomic<ScratchAllocator*> current{nullptr};

  AllocatorSlot() {
    keep_alive.push_back(std::make_shared<DriverScratchAllocator>());
    current.store(keep_alive.back().get());
  }
};

AllocatorSlot& allocator_slot() {
  static AllocatorSlot slot;
  return slot;
}

// Triton's float packing: fp16/bf16 by round-to-nearest-even from the value as float.
std::uint16_t to_fp16_bits(double value) {
  const float f = static_cast<float>(value);
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t exp = (x >> 23) & 0xffu;
  std::uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<std::uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 0x1f) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<std::uint16_t>(sign);
    mant |= 0x800000u;
    const int shift = 14 - e;
    std::uint32_t half = mant >> shift;
    const std::uint32_t rest = mant & ((1u << shift) - 1);
    const std::uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
  const std::uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent: correct
  return static_cast<std::uint16_t>(sign | half);
}

std::uint16_t to_bf16_bits(double value) {
  const float f = static_cast<float>(value);
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

double number_as_double(ArgKind stored, const Arg& a) {
  switch (stored) {
    case ArgKind::real: return a.value.f;
    case ArgKind::sint: return static_cast<double>(a.value.i);
    default: return static_cast<double>(a.value.u);
  }
}

// A runtime argument that needs converting to its kernel type (floats, fixed-type scalars).
void write_converted_param(std::uint64_t& slot, std::uint8_t code, const Arg& a) {
  slot = 0;
  const ArgKind stored = a.kind == ArgKind::typed ? a.stored : a.kind;
  switch (TypeCode::dtype(code)) {
    case DType::fp32: {
      const float f = static_cast<float>(number_as_double(stored, a));
      std::memcpy(&slot, &f, sizeof f);
      return;
    }
    case DType::fp64: {
      const double f = number_as_double(stored, a);
      std::memcpy(&slot, &f, sizeof f);
      return;
    }
    case DType::fp16: slot = to_fp16_bits(number_as_double(stored, a)); return;
    case DType::bf16: slot = to_bf16_bits(number_as_double(stored, a)); return;
    default:
      // Integers (and u1) were range-checked by the specializer; little-endian low bytes.
      slot = a.value.u;
      return;
  }
}

// Writes one runtime argument into its kernel-parameter slot, typed as Triton types it.
[[gnu::always_inline]] inline void write_param(std::uint64_t& slot, std::uint8_t code, const Arg& a) {
  // Addresses and integers (range-checked by the specializer) pass their low bytes as they
  // are (little-endian); only floating-point types need converting.
  const DType t = TypeCode::dtype(code);
  const bool float_type = t == DType::fp16 || t == DType::bf16 || t == DType::fp32 || t == DType::fp64;
  if (TypeCode::is_pointer(code) || (!float_type && a.kind != ArgKind::typed)) [[likely]] {
    slot = a.value.u;
    return;
  }
  write_converted_param(slot, code, a);
}

class ScopedContext {
 public:
  explicit ScopedContext(CUcontext ctx) {
    TRITONRT_CU_CHECK(Driver::get(), cuCtxPushCurrent(ctx), "entering a device context");
  }
  ~ScopedContext() {
    CUcontext popped = nullptr;
    (void)Driver::get().cuCtxPopCurrent(&popped);
  }
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;
};

// The context a launch on `stream` runs in: the stream's, or the thread's current one
// (device 0's primary context, made current, when the thread has none yet).
CUcontext launch_context(void* stream) {
  auto& d = Driver::get();
  CUcontext ctx = nullptr;
  if (stream != nullptr) {
    TRITONRT_CU_CHECK(d, cuStreamGetCtx(static_cast<CUstream>(stream), &ctx), "finding the launch stream's context");
    return ctx;
  }
  TRITONRT_CU_CHECK(d, cuCtxGetCurrent(&ctx), "querying the current context");
  if (ctx == nullptr) {
    CUdevice device = 0;
    TRITONRT_CU_CHECK(d, cuDeviceGet(&device, 0), "selecting device 0");
    TRITONRT_CU_CHECK(d, cuDevicePrimaryCtxRetain(&ctx, device), "retaining device 0's primary context");
    TRITONRT_CU_CHECK(d, cuCtxSetCurrent(ctx), "making device 0's primary context current");
  }
  return ctx;
}

std::unique_ptr<DeviceContext> make_device_context(CUcontext ctx) {
  auto& d = Driver::get();
  auto dc = std::make_unique<DeviceContext>();
  dc->context = ctx;
  {
    ScopedContext in(ctx);
    TRITONRT_CU_CHECK(d, cuCtxGetDevice(&dc->device), "finding a context's device");
  }
  const auto [major, minor] = d.compute_capability(dc->device);
  dc->target = Target{"cuda", std::to_string(major * 10 + minor), 32};
  const CUdevice_attribute grid_attrs[3] = {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
                                            CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z};
  for (int i = 0; i < 3; ++i) {
    TRITONRT_CU_CHECK(d, cuDeviceGetAttribute(&dc->max_grid[i], grid_attrs[i], dc->device), "reading grid limits");
  }
  TRITONRT_CU_CHECK(d, cuDeviceGetAttribute(&dc->max_shared_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                            dc->device),
                    "reading the shared memory limit");
  return dc;
}

// Loads an artifact into a context and checks it fits the device, as Triton does on load.
detail::LoadedFunction load(const DeviceContext& dc, std::shared_ptr<const Artifact> artifact,
                            const std::string& kernel) {
  auto& d = Driver::get();
  const auto& m = artifact->metadata;
  if (artifact->binary_kind != "cubin") {
    throw Error("tritonrt: kernel '" + kernel + "': cannot launch a " + artifact->binary_kind + " binary on CUDA");
  }
  const std::string where = "kernel '" + kernel + "' on device " + std::to_string(dc.device);
  if (m.shared > dc.max_shared_optin) {
    throw ResourceError("tritonrt: " + where + " needs " + std::to_string(m.shared) +
                        " bytes of shared memory; the device allows " + std::to_string(dc.max_shared_optin));
  }
  ScopedContext in(dc.context);
  detail::LoadedFunction f;
  CUmodule module = nullptr;
  TRITONRT_CU_CHECK(d, cuModuleLoadData(&module, artifact->binary.data()), "loading " + where);
  f.module = std::make_unique<detail::ModuleHandle>(module);
  TRITONRT_CU_CHECK(d, cuModuleGetFunction(&f.function, module, m.name.c_str()), "finding " + where);
  int max_threads = 0;
  TRITONRT_CU_CHECK(d, cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f.function),
                    "querying " + where);
  const long threads = static_cast<long>(m.num_warps) * m.target.warp_size;
  if (threads > max_threads) {
    throw ResourceError("tritonrt: " + where + " needs " + std::to_string(threads) +
                        " threads per block; it can run with at most " + std::to_string(max_threads));
  }
  if (m.shared > 49152 && dc.max_shared_optin > 49152) {
    // Beyond 48 KiB, dynamic shared memory must be opted into, as Triton's loader does.
    int shared_static = 0;
    TRITONRT_CU_CHECK(d, cuFuncSetCacheConfig(f.function, CU_FUNC_CACHE_PREFER_SHARED), "configuring " + where);
    TRITONRT_CU_CHECK(d, cuFuncGetAttribute(&shared_static, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f.function),
                      "querying " + where);
    TRITONRT_CU_CHECK(d, cuFuncSetAttribute(f.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                            dc.max_shared_optin - shared_static),
                      "opting " + where + " into large shared memory");
  }
  if (m.num_ctas == 16) {
    TRITONRT_CU_CHECK(d, cuFuncSetAttribute(f.function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
                      "allowing " + where + " a non-portable cluster size");
  }
  f.block_x = static_cast<unsigned>(threads);
  f.shared = static_cast<unsigned>(m.shared);
  f.num_ctas = m.num_ctas;
  f.launch_pdl = m.launch_pdl;
  f.launch_cooperative_grid = m.launch_cooperative_grid;
  f.global_scratch_size = m.global_scratch_size;
  f.global_scratch_align = m.global_scratch_align;
  f.profile_scratch_size = m.profile_scratch_size;
  f.profile_scratch_align = m.profile_scratch_align;
  f.artifact = std::move(artifact);
  return f;
}

// The scratch buffers of one launch, released (stream-ordered) when it ends, also when a
// later allocation or the launch itself throws.
class ScratchLease {
 public:
  explicit ScratchLease(void* stream) : stream_(stream) {}
  void* acquire(std::size_t bytes, std::size_t alignment) {
    if (allocator_ == nullptr) allocator_ = allocator_slot().current.load(std::memory_order_acquire);
    void* p = allocator_->allocate(bytes, alignment, stream_);
    held_[count_++] = p;
    return p;
  }
  ~ScratchLease() {
    for (int i = 0; i < count_; ++i) allocator_->release(held_[i], stream_);
  }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;

 private:
  void* stream_;
  ScratchAllocator* allocator_ = nullptr;
  void* held_[2] = {nullptr, nullptr};
  int count_ = 0;
};

[[noreturn]] void grid_error(const KernelSignature& sig, const std::string& what) {
  throw ArgumentError("tritonrt: kernel '" + sig.name + "': " + what);
}

}  // namespace

void set_scratch_allocator(std::shared_ptr<ScratchAllocator> allocator) {
  auto& slot = allocator_slot();
  std::lock_guard lock(slot.mutex);
  if (allocator == nullptr) allocator = slot.keep_alive.front();
  slot.keep_alive.push_back(allocator);
  slot.current.store(allocator.get(), std::memory_order_release);
}

const Arg& BoundArgs::operator[](std::string_view name) const {
  for (std::size_t i = 0; i < signature_.params.size() && i < values_.size(); ++i) {
    if (signature_.params[i].name == name) return values_[i];
  }
  throw ArgumentError("tritonrt: kernel '" + signature_.name + "' has no parameter '" + std::string(name) + "'");
}

std::int64_t BoundArgs::integer(std::string_view name) const {
  const Arg& a = (*this)[name];
  const ArgKind stored = a.kind == ArgKind::typed ? a.stored : a.kind;
  if (stored == ArgKind::sint || stored == ArgKind::boolean) return a.value.i;
  if (stored == ArgKind::uint && a.value.u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return a.value.i;
  }
  throw ArgumentError("tritonrt: kernel '" + signature_.name + "', parameter '" + std::string(name) +
                      "': the grid needs an integer, got " + detail::describe(a));
}

JitFunction::Impl::~Impl() = default;

detail::DeviceContext* JitFunction::Impl::find_context(void* ctx) const noexcept {
  DeviceContext* dc = contexts.load(std::memory_order_acquire);
  while (dc != nullptr && dc->context != ctx) dc = dc->next;
  return dc;
}

const detail::CacheEntry& JitFunction::Impl::resolve(JitFunction& fn, const LaunchConfig& config,
                                                     ResolvedCall& call, std::span<const Arg> given,
                                                     DeviceContext*& dc_out) {
  Impl& impl = *this;
  const KernelSignature& sig = fn.signature();
  const std::size_t n = impl.param_count;
  call.args = given;
  if (given.size() != n) {
    detail::bind_arguments(sig, impl.kernel.defaults, given, call.storage());
    call.args = std::span<const Arg>(call.storage(), n);
  }
  // One pass: Triton's specialization, the key's hash and the kernel-parameter bytes.
  const detail::HotRules hot(*impl.rules);
  const detail::ParamRule* params = impl.kernel.rules.data();
  const Arg* args = call.args.data();
  std::uint64_t hash = detail::kHashSeed;
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const ParamCode code = detail::specialize_argument(*impl.rules, hot, params[i], args[i], sig, i);
    call.codes[i] = code;
    hash = detail::hash_param(hash, code, args[i]);
    // The kernel takes the runtime (non-constexpr) arguments in order; a cache hit has the
    // same codes, so this list is the compiled kernel's parameter list.
    if (code.type != TypeCode::kConstexpr) {
      write_param(call.slots[i], code.type, args[i]);
      call.kernel_params[count++] = &call.slots[i];
    }
  }
  call.kernel_param_count = count;
  const std::span<const ParamCode> codes(call.codes, n);
  const detail::OptionsKey options(config.options);
  call.hash = detail::hash_finish(hash, options);

  const CUcontext ctx = launch_context(config.stream);
  DeviceContext* dc = impl.find_context(ctx);
  if (dc != nullptr) {
    if (const auto* hit = dc->find(call.hash, codes, call.args, options)) {
      dc_out = dc;
      return *hit;
    }
  }
  // Miss: compile (or find the artifact) and load it into this context, once.
  detail::GilReleased unlocked;
  std::lock_guard lock(impl.launch_mutex);
  if (dc == nullptr) {
    dc = impl.find_context(ctx);  // another thread may have added it meanwhile
    if (dc == nullptr) {
      auto created = make_device_context(ctx);
      created->next = impl.contexts.load(std::memory_order_relaxed);
      dc = created.get();
      impl.owned_contexts.push_back(std::move(created));
      impl.contexts.store(dc, std::memory_order_release);
    }
  }
  dc_out = dc;
  if (const auto* hit = dc->find(call.hash, codes, call.args, options)) return *hit;
  auto artifact = fn.compile_packed(dc->target, config.options, call.args);
  auto entry = std::make_unique<detail::CacheEntry>();
  entry->hash = call.hash;
  entry->codes.assign(codes.begin(), codes.end());
  entry->constexprs.assign(call.args.begin(), call.args.end());
  entry->strings.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (codes[i].type != TypeCode::kConstexpr) continue;
    entry->constexpr_indices.push_back(static_cast<std::uint16_t>(i));
    Arg& a = entry->constexprs[i];
    if (a.kind == ArgKind::string) {
      entry->strings[i].assign(a.value.s, a.size);
      a.value.s = entry->strings[i].data();
    }
  }
  entry->options = options;
  entry->kernel = load(*dc, std::move(artifact), sig.name);
  const detail::CacheEntry& ref = *entry;
  dc->insert(std::move(entry));
  return ref;
}

std::shared_ptr<const Artifact> JitFunction::artifact_for_packed(const LaunchConfig& config, std::span<const Arg> args) {
  ResolvedCall call;
  DeviceContext* dc = nullptr;
  return impl_->resolve(*this, config, call, args, dc).kernel.artifact;
}

void JitFunction::launch_packed(const LaunchConfig& config, std::span<const Arg> given) {
  ResolvedCall call;
  DeviceContext* dc = nullptr;
  const detail::LoadedFunction& k = impl_->resolve(*this, config, call, given, dc).kernel;

  const Grid grid = config.grid_fn ? config.grid_fn(BoundArgs(signature_, call.args)) : config.grid;
  if (grid.x < 0 || grid.y < 0 || grid.z < 0) grid_error(signature_, "grid dimensions must not be negative");
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) return;  // Triton launches nothing for an empty grid
  if (grid.x * k.num_ctas > dc->max_grid[0] || grid.y > dc->max_grid[1] || grid.z > dc->max_grid[2]) {
    grid_error(signature_, "grid (" + std::to_string(grid.x) + ", " + std::to_string(grid.y) + ", " +
                               std::to_string(grid.z) + ") with num_ctas " + std::to_string(k.num_ctas) +
                               " exceeds the device's limits (" + std::to_string(dc->max_grid[0]) + ", " +
                               std::to_string(dc->max_grid[1]) + ", " + std::to_string(dc->max_grid[2]) + ")");
  }

  // Kernel parameters: the runtime arguments (placed by resolve), then the global and
  // profile scratch pointers.
  void** params = call.kernel_params;
  std::size_t count = call.kernel_param_count;
  std::uint64_t scratch_slots[2];
  auto& d = Driver::get();
  const auto stream = static_cast<CUstream>(config.stream);
  const std::int64_t programs = grid.x * grid.y * grid.z * k.num_ctas;
  ScratchLease scratch(config.stream);
  const std::int64_t scratch_size[2] = {k.global_scratch_size, k.profile_scratch_size};
  const std::int64_t scratch_align[2] = {k.global_scratch_align, k.profile_scratch_align};
  for (int s = 0; s < 2; ++s) {
    void* buffer = nullptr;
    if (scratch_size[s] > 0) {
      buffer = scratch.acquire(static_cast<std::size_t>(programs * scratch_size[s]),
                               static_cast<std::size_t>(scratch_align[s]));
    }
    scratch_slots[s] = reinterpret_cast<std::uint64_t>(buffer);
    params[count++] = &scratch_slots[s];
  }

  const auto gx = static_cast<unsigned>(grid.x * k.num_ctas);
  const auto gy = static_cast<unsigned>(grid.y);
  const auto gz = static_cast<unsigned>(grid.z);
  CUresult result;
  if (!k.launch_pdl && !k.launch_cooperative_grid && k.num_ctas == 1) {
    result = d.cuLaunchKernel(k.function, gx, gy, gz, k.block_x, 1, 1, k.shared, stream, params, nullptr);
  } else {
    CUlaunchAttribute attrs[4];
    unsigned n_attrs = 0;
    if (k.launch_pdl) {
      attrs[n_attrs].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      attrs[n_attrs++].value.programmaticStreamSerializationAllowed = 1;
    }
    if (k.launch_cooperative_grid) {
      attrs[n_attrs].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
      attrs[n_attrs++].value.cooperative = 1;
    }
    if (k.num_ctas != 1) {
      attrs[n_attrs].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      attrs[n_attrs].value.clusterDim.x = static_cast<unsigned>(k.num_ctas);
      attrs[n_attrs].value.clusterDim.y = 1;
      attrs[n_attrs++].value.clusterDim.z = 1;
      attrs[n_attrs].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
      attrs[n_attrs++].value.clusterSchedulingPolicyPreference = CU_CLUSTER_SCHEDULING_POLICY_SPREAD;
    }
    CUlaunchConfig cfg{};
    cfg.gridDimX = gx;
    cfg.gridDimY = gy;
    cfg.gridDimZ = gz;
    cfg.blockDimX = k.block_x;
    cfg.blockDimY = 1;
    cfg.blockDimZ = 1;
    cfg.sharedMemBytes = k.shared;
    cfg.hStream = stream;
    cfg.attrs = attrs;
    cfg.numAttrs = n_attrs;
    result = d.cuLaunchKernelEx(&cfg, k.function, params, nullptr);
  }
  if (result != CUDA_SUCCESS) [[unlikely]] {
    d.fail(result, "cuLaunchKernel", "launching kernel '" + signature_.name + "'");
  }
}

}  // namespace tritonrt

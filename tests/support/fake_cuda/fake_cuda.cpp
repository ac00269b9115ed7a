// A stand-in CUDA driver (built as libcuda.so.1) so tritonrt's launch path can be tested and
// profiled on a machine without a GPU: device memory is host memory, kernels do not run but
// every launch is checked as the driver checks it and recorded, with its parameter bytes
// read through the cubin's own parameter layout. Test support only (see fake_cuda.h).

#include "fake_cuda.h"

#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#define FAKE_CUDA_EXPORT __attribute__((visibility("default")))

namespace {

// H100 (SXM) figures, so launches are held to the limits of the GPU tritonrt mostly targets.
constexpr unsigned kMaxGridX = 2147483647;
constexpr unsigned kMaxGridYZ = 65535;
constexpr unsigned kMaxBlockXY = 1024;
constexpr unsigned kMaxBlockZ = 64;
constexpr int kMaxThreadsPerBlock = 1024;
constexpr int kSharedDefault = 48 * 1024;  // dynamic shared memory a launch may use before opting in
constexpr int kSharedOptIn = 232448;       // the most a kernel may opt into (227 KiB)
constexpr unsigned kPortableCluster = 8;   // larger clusters need NON_PORTABLE_CLUSTER_SIZE_ALLOWED
constexpr unsigned kMaxCluster = 16;
constexpr std::size_t kTotalMemory = std::size_t{80} << 30;
constexpr std::size_t kAllocAlignment = 256;  // what cuMemAlloc guarantees
constexpr double kDefaultKernelUs = 1.0;

// Cubin (CUDA ELF) layout, checked against nvcc's and Triton's ptxas output with cuobjdump -elf.
constexpr unsigned kMachineCuda = 190;           // e_machine
constexpr unsigned kSymbolFunc = 2;              // STT_FUNC
constexpr unsigned kSymbolKernelEntry = 0x10;    // st_other bit of a __global__ entry point
constexpr unsigned kSectionSymtab = 2;           // SHT_SYMTAB
constexpr unsigned char kFormatSval = 0x04;      // EIFMT_SVAL: u16 size, then payload; other formats are 4 bytes
constexpr unsigned char kAttrKparamInfo = 0x17;  // EIATTR_KPARAM_INFO

struct Context;
struct Graph;

struct Stream {
  Context* ctx = nullptr;
  double clock_us = 0;       // simulated end of the work enqueued so far
  Graph* capture = nullptr;  // the graph launches go to while the stream is being captured
  bool alive = true;
};

struct Context {
  CUdevice device = 0;
  int retains = 0;
  Stream default_stream;  // the legacy NULL stream
};

struct Module;

struct Function {
  Module* module = nullptr;
  std::string name;
  char record_name[FAKE_CUDA_NAME_SIZE] = {};  // truncated copy, so a launch copies a fixed size
  const double* duration_us = nullptr;         // the kernel's entry in State::durations; < 0: default
  std::vector<std::uint16_t> offsets;          // per parameter, by ordinal
  std::vector<std::uint16_t> sizes;
  std::uint32_t param_bytes = 0;
  int max_dynamic_shared = kSharedDefault;
  bool non_portable_cluster = false;
  bool alive = true;
};

struct Module {
  Context* ctx = nullptr;
  std::vector<Function*> functions;
  bool alive = true;
};

// A captured stream's launches; an instantiated graph is a copy.
struct Graph {
  std::vector<FakeCudaLaunch> launches;
  bool alive = true;
};

struct Event {
  Context* ctx = nullptr;
  bool timing = true;
  bool recorded = false;
  double time_us = 0;
  bool alive = true;
};

// One cubin kernel: its name and parameter layout.
struct KernelLayout {
  std::string name;
  std::vector<std::uint16_t> offsets;
  std::vector<std::uint16_t> sizes;
  std::uint32_t param_bytes = 0;
};

// Objects live in deques and are only marked dead, never freed, so a stale handle is
// reported as invalid instead of being undefined behaviour.
struct State {
  std::mutex mutex;
  std::atomic<bool> initialized{false};
  int cc_major = 9;
  int cc_minor = 0;
  int env_max_threads = kMaxThreadsPerBlock;
  std::deque<Context> devices;  // each device's primary context
  std::deque<Stream> streams;
  std::deque<Event> events;
  std::deque<Module> modules;
  std::deque<Function> functions;
  std::deque<Graph> graphs;
  std::map<std::uintptr_t, std::size_t> allocations;
  std::unordered_map<std::string, double> durations;  // nodes are stable: functions point into them
  double default_duration_us = kDefaultKernelUs;
  double program_cost_us = 0;  // added per program of a launch's grid
  int max_threads = kMaxThreadsPerBlock;
  bool recording = true;
  FakeCudaStats stats{};
  std::uint64_t recorded = 0;
  FakeCudaLaunch ring[FAKE_CUDA_RING_SIZE];
};

// Never destroyed: tritonrt unloads its modules during process exit, after this library's
// static destructors would have run.
State& g = *new State;

thread_local std::vector<Context*> t_contexts;  // the calling thread's context stack

Context* current_context() { return t_contexts.empty() ? nullptr : t_contexts.back(); }

bool known_context(CUcontext ctx) {
  const auto* wanted = reinterpret_cast<const Context*>(ctx);
  return std::any_of(g.devices.begin(), g.devices.end(), [&](const Context& c) { return &c == wanted; });
}

CUresult initialized() {
  return g.initialized.load(std::memory_order_acquire) ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

CUresult check_device(CUdevice device) {
  if (const CUresult r = initialized(); r != CUDA_SUCCESS) return r;
  return device >= 0 && static_cast<std::size_t>(device) < g.devices.size() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

// The stream a handle names; the NULL and the special handles name the current context's default stream.
CUresult resolve_stream(CUstream handle, Stream*& out) {
  if (handle == nullptr || handle == CU_STREAM_LEGACY || handle == CU_STREAM_PER_THREAD) {
    Context* ctx = current_context();
    if (ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    out = &ctx->default_stream;
    return CUDA_SUCCESS;
  }
  out = reinterpret_cast<Stream*>(handle);
  return out->alive ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

// Whether a handle names a live stream (or the default one of a current context).
CUresult check_stream(CUstream handle) {
  std::lock_guard lock(g.mutex);
  Stream* s = nullptr;
  return resolve_stream(handle, s);
}

// Memory operations run at once; under capture they would have to become graph nodes, which the fake does not model.
CUresult immediate_stream(CUstream handle) {
  std::lock_guard lock(g.mutex);
  Stream* s = nullptr;
  if (const CUresult r = resolve_stream(handle, s); r != CUDA_SUCCESS) return r;
  return s->capture != nullptr ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

// Whether [address, address + bytes) lies in one live allocation (caller holds the mutex).
bool in_allocation(CUdeviceptr address, std::size_t bytes) {
  auto it = g.allocations.upper_bound(address);
  if (it == g.allocations.begin()) return false;
  --it;
  return address >= it->first && address - it->first + bytes <= it->second;
}

CUresult allocate(CUdeviceptr* out, std::size_t bytes) {
  if (out == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  const std::size_t rounded = (bytes + kAllocAlignment - 1) / kAllocAlignment * kAllocAlignment;
  void* p = std::aligned_alloc(kAllocAlignment, rounded);
  if (p == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  std::lock_guard lock(g.mutex);
  *out = reinterpret_cast<CUdeviceptr>(p);
  g.allocations.emplace(*out, bytes);
  return CUDA_SUCCESS;
}

CUresult release(CUdeviceptr address) {
  std::lock_guard lock(g.mutex);
  const auto it = g.allocations.find(address);
  if (it == g.allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  std::free(reinterpret_cast<void*>(address));
  g.allocations.erase(it);
  return CUDA_SUCCESS;
}

CUresult copy(void* to, const void* from, std::size_t bytes, CUdeviceptr device_to, CUdeviceptr device_from) {
  if (bytes == 0) return CUDA_SUCCESS;
  std::lock_guard lock(g.mutex);
  const bool to_ok = device_to == 0 || in_allocation(device_to, bytes);
  const bool from_ok = device_from == 0 || in_allocation(device_from, bytes);
  if (!to_ok || !from_ok) return CUDA_ERROR_INVALID_VALUE;
  std::memmove(to, from, bytes);
  return CUDA_SUCCESS;
}

template <class T>
CUresult fill(CUdeviceptr address, T value, std::size_t count) {
  if (count == 0) return CUDA_SUCCESS;
  if (address % sizeof(T) != 0) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(g.mutex);
  if (!in_allocation(address, count * sizeof(T))) return CUDA_ERROR_INVALID_VALUE;
  std::fill_n(reinterpret_cast<T*>(address), count, value);
  return CUDA_SUCCESS;
}

// --- Cubin parsing ---

template <class T>
T read(const unsigned char* p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

struct SectionHeader {
  std::uint32_t name;
  std::uint32_t type;
  std::uint64_t offset;
  std::uint64_t size;
  std::uint32_t link;
};

// A cubin's compute capability is in e_flags, where each ELF ABI version puts it; 0 when unknown.
int cubin_sm(const unsigned char* image) {
  const unsigned abi_version = image[8];
  const auto flags = read<std::uint32_t>(image + 0x30);
  if (abi_version == 7) return static_cast<int>(flags & 0xff);
  if (abi_version == 8) return static_cast<int>((flags >> 8) & 0xff);
  return 0;
}

// The parameters of one kernel, from the EIATTR_KPARAM_INFO entries of its .nv.info.<name>
// section. Each entry is {u8 format, u8 attribute, u16 size, payload}; a KPARAM_INFO payload
// is {u32 index, u16 ordinal, u16 offset, u32 flags}, the parameter's size in flags bits 18..31.
CUresult parse_params(const unsigned char* p, const unsigned char* end, KernelLayout& kernel) {
  struct Param {
    std::uint16_t ordinal, offset, size;
  };
  std::vector<Param> params;
  while (p < end) {
    if (end - p < 4) return CUDA_ERROR_INVALID_IMAGE;
    if (p[0] != kFormatSval) {
      if (p[0] < 1 || p[0] > 3) return CUDA_ERROR_INVALID_IMAGE;
      p += 4;
      continue;
    }
    const auto length = read<std::uint16_t>(p + 2);
    if (end - p - 4 < length) return CUDA_ERROR_INVALID_IMAGE;
    if (p[1] == kAttrKparamInfo && length >= 12) {
      const auto flags = read<std::uint32_t>(p + 12);
      params.push_back({read<std::uint16_t>(p + 8), read<std::uint16_t>(p + 10),
                        static_cast<std::uint16_t>((flags >> 18) & 0x3fff)});
    }
    p += 4 + length;
  }
  std::sort(params.begin(), params.end(), [](const Param& a, const Param& b) { return a.ordinal < b.ordinal; });
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (params[i].ordinal != i) return CUDA_ERROR_INVALID_IMAGE;
    kernel.offsets.push_back(params[i].offset);
    kernel.sizes.push_back(params[i].size);
    kernel.param_bytes = std::max<std::uint32_t>(kernel.param_bytes, params[i].offset + params[i].size);
  }
  return CUDA_SUCCESS;
}

// The kernels of a cubin: entry-point symbols that have a .nv.info.<name> section.
// cuModuleLoadData is given no size, so the ELF headers are trusted, as the driver trusts them.
CUresult parse_cubin(const unsigned char* image, std::vector<KernelLayout>& kernels) {
  if (std::memcmp(image,
                  "\x7f"
                  "ELF",
                  4) != 0 ||
      image[4] != 2 /* 64-bit */ || image[5] != 1 /* little-endian */ ||
      read<std::uint16_t>(image + 18) != kMachineCuda) {
    return CUDA_ERROR_INVALID_IMAGE;
  }
  if (const int sm = cubin_sm(image); sm != 0 && (sm / 10 != g.cc_major || sm % 10 > g.cc_minor)) {
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  }
  const auto section_offset = read<std::uint64_t>(image + 0x28);
  const auto entry_size = read<std::uint16_t>(image + 0x3a);
  const auto count = read<std::uint16_t>(image + 0x3c);
  const auto names_index = read<std::uint16_t>(image + 0x3e);
  if (entry_size != 64 || names_index >= count) return CUDA_ERROR_INVALID_IMAGE;
  std::vector<SectionHeader> sections(count);
  for (unsigned i = 0; i < count; ++i) {
    const unsigned char* h = image + section_offset + std::uint64_t{i} * entry_size;
    sections[i] = {read<std::uint32_t>(h), read<std::uint32_t>(h + 4), read<std::uint64_t>(h + 0x18),
                   read<std::uint64_t>(h + 0x20), read<std::uint32_t>(h + 0x28)};
  }
  const auto section_name = [&](const SectionHeader& s) {
    return std::string_view(reinterpret_cast<const char*>(image + sections[names_index].offset + s.name));
  };
  constexpr std::string_view kInfoPrefix = ".nv.info.";
  std::unordered_map<std::string_view, const SectionHeader*> info;
  const SectionHeader* symtab = nullptr;
  for (const auto& s : sections) {
    if (s.type == kSectionSymtab) symtab = &s;
    if (section_name(s).starts_with(kInfoPrefix)) info.emplace(section_name(s).substr(kInfoPrefix.size()), &s);
  }
  if (symtab == nullptr || symtab->link >= count) return CUDA_ERROR_INVALID_IMAGE;
  const unsigned char* names = image + sections[symtab->link].offset;
  constexpr std::size_t kSymbolSize = 24;
  for (std::uint64_t at = 0; at + kSymbolSize <= symtab->size; at += kSymbolSize) {
    const unsigned char* sym = image + symtab->offset + at;
    if ((sym[4] & 0xf) != kSymbolFunc || (sym[5] & kSymbolKernelEntry) == 0) continue;
    const std::string_view name(reinterpret_cast<const char*>(names + read<std::uint32_t>(sym)));
    const auto found = info.find(name);
    if (found == info.end()) continue;
    KernelLayout kernel;
    kernel.name = name;
    const unsigned char* begin = image + found->second->offset;
    if (const CUresult r = parse_params(begin, begin + found->second->size, kernel); r != CUDA_SUCCESS) return r;
    kernels.push_back(std::move(kernel));
  }
  return CUDA_SUCCESS;
}

// --- Launches ---

struct LaunchShape {
  unsigned grid[3];
  unsigned block[3];
  unsigned shared;
  unsigned cluster[3];
  bool pdl;
  bool cooperative;
  bool via_ex;
};

// The driver's launch checks (caller holds the mutex).
CUresult check_shape(const Function& f, const LaunchShape& s) {
  for (int i = 0; i < 3; ++i) {
    if (s.grid[i] == 0 || s.block[i] == 0) return CUDA_ERROR_INVALID_VALUE;
  }
  if (s.grid[0] > kMaxGridX || s.grid[1] > kMaxGridYZ || s.grid[2] > kMaxGridYZ) return CUDA_ERROR_INVALID_VALUE;
  if (s.block[0] > kMaxBlockXY || s.block[1] > kMaxBlockXY || s.block[2] > kMaxBlockZ) return CUDA_ERROR_INVALID_VALUE;
  const std::uint64_t threads = std::uint64_t{s.block[0]} * s.block[1] * s.block[2];
  if (threads > kMaxThreadsPerBlock) return CUDA_ERROR_INVALID_VALUE;
  if (threads > static_cast<std::uint64_t>(g.max_threads)) return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  if (s.shared > static_cast<unsigned>(f.max_dynamic_shared)) return CUDA_ERROR_INVALID_VALUE;
  if (s.cluster[0] != 0) {
    if (g.cc_major < 9) return CUDA_ERROR_NOT_SUPPORTED;
    std::uint64_t size = 1;
    for (int i = 0; i < 3; ++i) {
      if (s.cluster[i] == 0 || s.grid[i] % s.cluster[i] != 0) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
      size *= s.cluster[i];
    }
    if (size > kMaxCluster || (size > kPortableCluster && !f.non_portable_cluster)) {
      return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    }
  }
  return CUDA_SUCCESS;
}

// The kernel's fixed time, plus the per-program cost for each program of the grid.
double duration_us(const Function& f, const unsigned* grid) {
  const double fixed = *f.duration_us >= 0 ? *f.duration_us : g.default_duration_us;
  return fixed + g.program_cost_us * static_cast<double>(grid[0]) * grid[1] * grid[2];
}

// Runs a launch on its stream's clock; returns its record (a copy of `captured` for a graph
// replay), or nullptr when recording is off (caller holds the mutex).
FakeCudaLaunch* run(const FakeCudaLaunch* captured, const Function& f, Stream& s, const unsigned* grid) {
  const std::uint64_t sequence = ++g.stats.launches;
  const double start = s.clock_us;
  s.clock_us += duration_us(f, grid);
  if (!g.recording) return nullptr;
  FakeCudaLaunch* record = &g.ring[g.recorded++ % FAKE_CUDA_RING_SIZE];
  if (captured != nullptr) *record = *captured;
  record->sequence = sequence;
  record->start_us = start;
  record->end_us = s.clock_us;
  return record;
}

void fill_record(FakeCudaLaunch& r, const Function& f, const LaunchShape& shape, CUstream stream, Context* ctx,
                 void** params) {
  r.function = const_cast<Function*>(&f);
  r.stream = stream;
  r.context = ctx;
  std::memcpy(r.name, f.record_name, sizeof r.name);
  std::copy_n(shape.grid, 3, r.grid);
  std::copy_n(shape.block, 3, r.block);
  r.shared_bytes = shape.shared;
  std::copy_n(shape.cluster, 3, r.cluster);
  r.pdl = shape.pdl;
  r.cooperative = shape.cooperative;
  r.via_ex = shape.via_ex;
  r.from_graph = 0;
  const auto count = static_cast<std::uint32_t>(f.offsets.size());
  r.param_count = count;
  r.param_bytes = f.param_bytes;
  std::copy_n(f.offsets.data(), count, r.param_offset);
  std::copy_n(f.sizes.data(), count, r.param_size);
  std::memset(r.params, 0, f.param_bytes);
  for (std::uint32_t i = 0; i < count; ++i) std::memcpy(r.params + f.offsets[i], params[i], f.sizes[i]);
}

CUresult launch(CUfunction handle, const LaunchShape& shape, CUstream stream, void** params, void** extra) {
  auto* f = reinterpret_cast<Function*>(handle);
  if (f == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (extra != nullptr) return CUDA_ERROR_NOT_SUPPORTED;  // only kernelParams, as tritonrt passes them
  if (params == nullptr && !f->offsets.empty()) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(g.mutex);
  if (!f->alive) return CUDA_ERROR_INVALID_HANDLE;
  Stream* s = nullptr;
  if (const CUresult r = resolve_stream(stream, s); r != CUDA_SUCCESS) return r;
  if (s->ctx != f->module->ctx) return CUDA_ERROR_INVALID_HANDLE;  // a module's functions run only in its context
  if (const CUresult r = check_shape(*f, shape); r != CUDA_SUCCESS) return r;
  FakeCudaLaunch* record = nullptr;
  if (s->capture != nullptr) {
    ++g.stats.captured_launches;
    record = &s->capture->launches.emplace_back();
  } else {
    record = run(nullptr, *f, *s, shape.grid);
  }
  if (record != nullptr) fill_record(*record, *f, shape, stream, s->ctx, params);
  return CUDA_SUCCESS;
}

struct ErrorText {
  CUresult code;
  const char* name;
  const char* text;
};

constexpr ErrorText kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "an argument is out of range"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "cuInit has not been called"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA device (TRITONRT_FAKE_CUDA_DEVICES is 0)"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "no such device"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "the image is not a cubin the driver can read"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "no current context, or not a context"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU", "the cubin was built for another architecture"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "a handle is invalid, destroyed, or of another context"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "no such symbol"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many threads for this kernel"},
    {CUDA_ERROR_INVALID_CLUSTER_SIZE, "CUDA_ERROR_INVALID_CLUSTER_SIZE", "the cluster size is not allowed"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "not supported (or not modelled by the fake driver)"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "the operation is not allowed on a capturing stream"},
    {CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE", "the stream is not in the state the call needs"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

const ErrorText* find_error(CUresult code) {
  const auto it =
      std::find_if(std::begin(kErrors), std::end(kErrors), [&](const ErrorText& e) { return e.code == code; });
  return it == std::end(kErrors) ? nullptr : it;
}

// An integer in [min, max] from the environment, or `fallback`; false when it is set but not valid.
bool env_int(const char* name, int fallback, int min, int max, int& out) {
  out = fallback;
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return true;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < min || value > max) {
    std::fprintf(stderr, "fake libcuda: %s=%s is not an integer in [%d, %d]\n", name, text, min, max);
    return false;
  }
  out = static_cast<int>(value);
  return true;
}

CUresult destroy_graph(void* handle) {
  if (handle == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard lock(g.mutex);
  auto* graph = static_cast<Graph*>(handle);
  if (!graph->alive) return CUDA_ERROR_INVALID_HANDLE;
  graph->alive = false;
  graph->launches = {};
  return CUDA_SUCCESS;
}

}  // namespace

// The driver entry points, under names of our own: hidden C functions (clang mangles static
// ones), so the exported aliases below can name them; cuGetProcAddress hands them out too.
#pragma GCC visibility push(hidden)
extern "C" {

CUresult fake_init(unsigned int flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(g.mutex);
  if (g.initialized.load(std::memory_order_relaxed)) return g.devices.empty() ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS;
  int devices = 0;
  int cc = 0;
  if (!env_int("TRITONRT_FAKE_CUDA_DEVICES", 1, 0, 64, devices) || !env_int("TRITONRT_FAKE_CUDA_CC", 90, 10, 255, cc) ||
      !env_int("TRITONRT_FAKE_CUDA_MAX_THREADS", kMaxThreadsPerBlock, 1, kMaxThreadsPerBlock, g.env_max_threads)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  g.cc_major = cc / 10;
  g.cc_minor = cc % 10;
  g.max_threads = g.env_max_threads;
  for (int d = 0; d < devices; ++d) {
    Context& ctx = g.devices.emplace_back();
    ctx.device = d;
    ctx.default_stream.ctx = &ctx;
  }
  g.initialized.store(true, std::memory_order_release);
  return devices == 0 ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS;
}

CUresult fake_driver_get_version(int* version) {
  if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *version = CUDA_VERSION;
  return CUDA_SUCCESS;
}

CUresult fake_get_error_name(CUresult error, const char** out) {
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const ErrorText* e = find_error(error);
  *out = e ? e->name : nullptr;
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult fake_get_error_string(CUresult error, const char** out) {
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const ErrorText* e = find_error(error);
  *out = e ? e->text : nullptr;
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult fake_device_get(CUdevice* device, int ordinal) {
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = check_device(ordinal); r != CUDA_SUCCESS) return r;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult fake_device_get_count(int* count) {
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = initialized(); r != CUDA_SUCCESS) return r;
  *count = static_cast<int>(g.devices.size());
  return CUDA_SUCCESS;
}

CUresult fake_device_get_attribute(int* value, CUdevice_attribute attribute, CUdevice device) {
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = check_device(device); r != CUDA_SUCCESS) return r;
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *value = kMaxThreadsPerBlock;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
      *value = kMaxBlockXY;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
      *value = kMaxBlockZ;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
      *value = static_cast<int>(kMaxGridX);
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
      *value = kMaxGridYZ;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
      *value = kSharedDefault;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      *value = kSharedOptIn;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
      *value = 233472;
      break;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY:
      *value = 65536;
      break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
      *value = 32;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR:
      *value = 65536;
      break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
      *value = 1980000;
      break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
      *value = 2619000;
      break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
      *value = 5120;
      break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
      *value = 50 << 20;
      break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *value = 132;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
      *value = 2048;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR:
      *value = 32;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *value = g.cc_major;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *value = g.cc_minor;
      break;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED:
    case CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT:
      *value = 0;
      break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
      *value = 1;
      break;
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH:
      *value = g.cc_major >= 9;
      break;
    default:
      return CUDA_ERROR_NOT_SUPPORTED;  // not modelled: a test sees which one was asked for
  }
  return CUDA_SUCCESS;
}

CUresult fake_device_get_name(char* name, int length, CUdevice device) {
  if (name == nullptr || length <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = check_device(device); r != CUDA_SUCCESS) return r;
  std::snprintf(name, static_cast<std::size_t>(length), "tritonrt fake CUDA device %d (H100-like, sm_%d%d)", device,
                g.cc_major, g.cc_minor);
  return CUDA_SUCCESS;
}

CUresult fake_device_total_mem(std::size_t* bytes, CUdevice device) {
  if (bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = check_device(device); r != CUDA_SUCCESS) return r;
  *bytes = kTotalMemory;
  return CUDA_SUCCESS;
}

CUresult fake_primary_ctx_retain(CUcontext* ctx, CUdevice device) {
  if (ctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = check_device(device); r != CUDA_SUCCESS) return r;
  std::lock_guard lock(g.mutex);
  Context& c = g.devices[static_cast<std::size_t>(device)];
  ++c.retains;
  *ctx = reinterpret_cast<CUcontext>(&c);
  return CUDA_SUCCESS;
}

CUresult fake_primary_ctx_release(CUdevice device) {
  if (const CUresult r = check_device(device); r != CUDA_SUCCESS) return r;
  std::lock_guard lock(g.mutex);
  Context& c = g.devices[static_cast<std::size_t>(device)];
  if (c.retains == 0) return CUDA_ERROR_INVALID_CONTEXT;
  --c.retains;
  return CUDA_SUCCESS;
}

CUresult fake_ctx_get_current(CUcontext* ctx) {
  if (ctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = initialized(); r != CUDA_SUCCESS) return r;
  *ctx = reinterpret_cast<CUcontext>(current_context());
  return CUDA_SUCCESS;
}

CUresult fake_ctx_set_current(CUcontext ctx) {
  if (const CUresult r = initialized(); r != CUDA_SUCCESS) return r;
  if (ctx == nullptr) {
    if (!t_contexts.empty()) t_contexts.pop_back();
    return CUDA_SUCCESS;
  }
  if (!known_context(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
  if (t_contexts.empty()) {
    t_contexts.push_back(reinterpret_cast<Context*>(ctx));
  } else {
    t_contexts.back() = reinterpret_cast<Context*>(ctx);
  }
  return CUDA_SUCCESS;
}

CUresult fake_ctx_push_current(CUcontext ctx) {
  if (const CUresult r = initialized(); r != CUDA_SUCCESS) return r;
  if (ctx == nullptr || !known_context(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
  t_contexts.push_back(reinterpret_cast<Context*>(ctx));
  return CUDA_SUCCESS;
}

CUresult fake_ctx_pop_current(CUcontext* ctx) {
  if (const CUresult r = initialized(); r != CUDA_SUCCESS) return r;
  if (t_contexts.empty()) return CUDA_ERROR_INVALID_CONTEXT;
  if (ctx != nullptr) *ctx = reinterpret_cast<CUcontext>(t_contexts.back());
  t_contexts.pop_back();
  return CUDA_SUCCESS;
}

CUresult fake_ctx_get_device(CUdevice* device) {
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = initialized(); r != CUDA_SUCCESS) return r;
  const Context* ctx = current_context();
  if (ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  *device = ctx->device;
  return CUDA_SUCCESS;
}

CUresult fake_ctx_synchronize() {
  if (const CUresult r = initialized(); r != CUDA_SUCCESS) return r;
  return current_context() != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult fake_stream_create(CUstream* stream, unsigned int flags) {
  if (stream == nullptr || (flags & ~static_cast<unsigned>(CU_STREAM_NON_BLOCKING)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  Context* ctx = current_context();
  if (ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  std::lock_guard lock(g.mutex);
  Stream& s = g.streams.emplace_back();
  s.ctx = ctx;
  *stream = reinterpret_cast<CUstream>(&s);
  return CUDA_SUCCESS;
}

CUresult fake_stream_destroy(CUstream stream) {
  if (stream == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard lock(g.mutex);
  auto* s = reinterpret_cast<Stream*>(stream);
  if (!s->alive) return CUDA_ERROR_INVALID_HANDLE;
  s->alive = false;
  return CUDA_SUCCESS;
}

CUresult fake_stream_synchronize(CUstream stream) { return immediate_stream(stream); }

CUresult fake_stream_get_ctx(CUstream stream, CUcontext* ctx) {
  if (ctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(g.mutex);
  Stream* s = nullptr;
  if (const CUresult r = resolve_stream(stream, s); r != CUDA_SUCCESS) return r;
  *ctx = reinterpret_cast<CUcontext>(s->ctx);
  return CUDA_SUCCESS;
}

CUresult fake_stream_is_capturing(CUstream stream, CUstreamCaptureStatus* status) {
  if (status == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(g.mutex);
  Stream* s = nullptr;
  if (const CUresult r = resolve_stream(stream, s); r != CUDA_SUCCESS) return r;
  *status = s->capture != nullptr ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

CUresult fake_stream_begin_capture(CUstream stream, CUstreamCaptureMode mode) {
  if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
      mode != CU_STREAM_CAPTURE_MODE_RELAXED) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::lock_guard lock(g.mutex);
  Stream* s = nullptr;
  if (const CUresult r = resolve_stream(stream, s); r != CUDA_SUCCESS) return r;
  // The legacy default stream cannot be captured.
  if (s == &s->ctx->default_stream) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (s->capture != nullptr) return CUDA_ERROR_ILLEGAL_STATE;
  s->capture = &g.graphs.emplace_back();
  return CUDA_SUCCESS;
}

CUresult fake_stream_end_capture(CUstream stream, CUgraph* graph) {
  if (graph == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(g.mutex);
  Stream* s = nullptr;
  if (const CUresult r = resolve_stream(stream, s); r != CUDA_SUCCESS) return r;
  if (s->capture == nullptr) return CUDA_ERROR_ILLEGAL_STATE;
  *graph = reinterpret_cast<CUgraph>(s->capture);
  s->capture = nullptr;
  return CUDA_SUCCESS;
}

CUresult fake_graph_instantiate_with_flags(CUgraphExec* exec, CUgraph graph, unsigned long long /*flags*/) {
  if (exec == nullptr || graph == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(g.mutex);
  const auto* source = reinterpret_cast<Graph*>(graph);
  if (!source->alive) return CUDA_ERROR_INVALID_HANDLE;
  Graph& instance = g.graphs.emplace_back();
  instance.launches = source->launches;
  *exec = reinterpret_cast<CUgraphExec>(&instance);
  return CUDA_SUCCESS;
}

CUresult fake_graph_launch(CUgraphExec exec, CUstream stream) {
  if (exec == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard lock(g.mutex);
  const auto* graph = reinterpret_cast<Graph*>(exec);
  if (!graph->alive) return CUDA_ERROR_INVALID_HANDLE;
  Stream* s = nullptr;
  if (const CUresult r = resolve_stream(stream, s); r != CUDA_SUCCESS) return r;
  if (s->capture != nullptr) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;  // nested graphs are not modelled
  for (const FakeCudaLaunch& node : graph->launches) {
    const auto* f = static_cast<const Function*>(node.function);
    if (!f->alive) return CUDA_ERROR_INVALID_HANDLE;
    if (s->ctx != f->module->ctx) return CUDA_ERROR_INVALID_HANDLE;
  }
  for (const FakeCudaLaunch& node : graph->launches) {
    if (FakeCudaLaunch* record = run(&node, *static_cast<const Function*>(node.function), *s, node.grid)) {
      record->stream = stream;
      record->from_graph = 1;
    }
  }
  return CUDA_SUCCESS;
}

CUresult fake_graph_destroy(CUgraph graph) { return destroy_graph(graph); }
CUresult fake_graph_exec_destroy(CUgraphExec exec) { return destroy_graph(exec); }

CUresult fake_module_load_data(CUmodule* module, const void* image) {
  if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = initialized(); r != CUDA_SUCCESS) return r;
  Context* ctx = current_context();
  if (ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  std::vector<KernelLayout> kernels;
  if (const CUresult r = parse_cubin(static_cast<const unsigned char*>(image), kernels); r != CUDA_SUCCESS) return r;
  std::lock_guard lock(g.mutex);
  Module& m = g.modules.emplace_back();
  m.ctx = ctx;
  for (KernelLayout& k : kernels) {
    Function& f = g.functions.emplace_back();
    f.module = &m;
    f.name = std::move(k.name);
    f.name.copy(f.record_name, sizeof f.record_name - 1);
    f.duration_us = &g.durations.try_emplace(f.name, -1.0).first->second;
    f.offsets = std::move(k.offsets);
    f.sizes = std::move(k.sizes);
    f.param_bytes = k.param_bytes;
    m.functions.push_back(&f);
  }
  ++g.stats.module_loads;
  *module = reinterpret_cast<CUmodule>(&m);
  return CUDA_SUCCESS;
}

CUresult fake_module_unload(CUmodule module) {
  if (module == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard lock(g.mutex);
  auto* m = reinterpret_cast<Module*>(module);
  if (!m->alive) return CUDA_ERROR_INVALID_HANDLE;
  m->alive = false;
  for (Function* f : m->functions) f->alive = false;
  ++g.stats.module_unloads;
  return CUDA_SUCCESS;
}

CUresult fake_module_get_function(CUfunction* function, CUmodule module, const char* name) {
  if (function == nullptr || module == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(g.mutex);
  const auto* m = reinterpret_cast<Module*>(module);
  if (!m->alive) return CUDA_ERROR_INVALID_HANDLE;
  const auto it =
      std::find_if(m->functions.begin(), m->functions.end(), [&](const Function* f) { return f->name == name; });
  if (it == m->functions.end()) return CUDA_ERROR_NOT_FOUND;
  // Launch records have fixed room, so launches stay allocation-free; raise the limits if a test needs more.
  if ((*it)->offsets.size() > FAKE_CUDA_MAX_PARAMS || (*it)->param_bytes > FAKE_CUDA_MAX_PARAM_BYTES) {
    std::fprintf(stderr, "fake libcuda: kernel %s has more parameters than a launch record holds\n", name);
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  *function = reinterpret_cast<CUfunction>(*it);
  return CUDA_SUCCESS;
}

CUresult fake_func_get_attribute(int* value, CUfunction_attribute attribute, CUfunction function) {
  if (value == nullptr || function == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(g.mutex);
  const auto* f = reinterpret_cast<Function*>(function);
  if (!f->alive) return CUDA_ERROR_INVALID_HANDLE;
  switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *value = g.max_threads;
      break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
      *value = 0;
      break;  // Triton kernels use dynamic shared memory only
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      *value = f->max_dynamic_shared;
      break;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
      *value = f->non_portable_cluster;
      break;
    default:
      return CUDA_ERROR_NOT_SUPPORTED;
  }
  return CUDA_SUCCESS;
}

CUresult fake_func_set_attribute(CUfunction function, CUfunction_attribute attribute, int value) {
  if (function == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(g.mutex);
  auto* f = reinterpret_cast<Function*>(function);
  if (!f->alive) return CUDA_ERROR_INVALID_HANDLE;
  switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      if (value < 0 || value > kSharedOptIn) return CUDA_ERROR_INVALID_VALUE;
      f->max_dynamic_shared = value;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
      f->non_portable_cluster = value != 0;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_NOT_SUPPORTED;
  }
}

CUresult fake_func_set_cache_config(CUfunction function, CUfunc_cache config) {
  if (function == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (config != CU_FUNC_CACHE_PREFER_NONE && config != CU_FUNC_CACHE_PREFER_SHARED &&
      config != CU_FUNC_CACHE_PREFER_L1 && config != CU_FUNC_CACHE_PREFER_EQUAL) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::lock_guard lock(g.mutex);
  return reinterpret_cast<Function*>(function)->alive ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult fake_launch_kernel(CUfunction function, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
                            unsigned int block_x, unsigned int block_y, unsigned int block_z, unsigned int shared,
                            CUstream stream, void** params, void** extra) {
  const LaunchShape shape{
      {grid_x, grid_y, grid_z}, {block_x, block_y, block_z}, shared, {0, 0, 0}, false, false, false};
  return launch(function, shape, stream, params, extra);
}

// Writes what it was asked into the map (FakeCudaTensorMap, fake_cuda.h), checked as the
// driver checks it: a test reads back what a kernel's TMA descriptor would say.
CUresult fake_tensor_map_encode_tiled(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, void* address,
                                      const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                                      const cuuint32_t* element_strides, CUtensorMapInterleave interleave,
                                      CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
                                      CUtensorMapFloatOOBfill fill) {
  if (map == nullptr || rank == 0 || rank > 5 || dims == nullptr || box == nullptr || element_strides == nullptr ||
      (rank > 1 && strides == nullptr) || reinterpret_cast<std::uintptr_t>(address) % 16 != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  FakeCudaTensorMap record{};
  record.magic = FAKE_CUDA_TENSOR_MAP_MAGIC;
  record.data_type = static_cast<uint8_t>(type);
  record.rank = static_cast<uint8_t>(rank);
  record.swizzle = static_cast<uint8_t>(swizzle);
  record.fill = static_cast<uint8_t>(fill);
  record.interleave = static_cast<uint8_t>(interleave);
  record.l2_promotion = static_cast<uint8_t>(l2);
  record.address = reinterpret_cast<std::uintptr_t>(address);
  for (cuuint32_t i = 0; i < rank; ++i) {
    if (box[i] == 0 || box[i] > 256 || dims[i] == 0) return CUDA_ERROR_INVALID_VALUE;
    record.dims[i] = dims[i];
    record.box[i] = box[i];
    record.element_strides[i] = static_cast<uint8_t>(element_strides[i]);
  }
  for (cuuint32_t i = 0; i + 1 < rank; ++i) {
    if (strides[i] % 16 != 0) return CUDA_ERROR_INVALID_VALUE;
    record.strides[i] = strides[i];
  }
  static_assert(sizeof(FakeCudaTensorMap) <= sizeof(CUtensorMap));
  std::memset(map, 0, sizeof *map);
  std::memcpy(map, &record, sizeof record);
  std::lock_guard lock(g.mutex);
  ++g.stats.tensor_maps_encoded;
  return CUDA_SUCCESS;
}

CUresult fake_launch_kernel_ex(const CUlaunchConfig* config, CUfunction function, void** params, void** extra) {
  if (config == nullptr || (config->numAttrs > 0 && config->attrs == nullptr)) return CUDA_ERROR_INVALID_VALUE;
  LaunchShape shape{{config->gridDimX, config->gridDimY, config->gridDimZ},
                    {config->blockDimX, config->blockDimY, config->blockDimZ},
                    config->sharedMemBytes,
                    {0, 0, 0},
                    false,
                    false,
                    true};
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const CUlaunchAttribute& a = config->attrs[i];
    switch (a.id) {
      case CU_LAUNCH_ATTRIBUTE_IGNORE:
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
        break;  // placement only
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
        shape.cluster[0] = a.value.clusterDim.x;
        shape.cluster[1] = a.value.clusterDim.y;
        shape.cluster[2] = a.value.clusterDim.z;
        break;
      case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
        shape.pdl = a.value.programmaticStreamSerializationAllowed != 0;
        break;
      case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
        shape.cooperative = a.value.cooperative != 0;
        break;
      default:
        return CUDA_ERROR_NOT_SUPPORTED;  // not modelled: refused so a test notices
    }
  }
  return launch(function, shape, config->hStream, params, extra);
}

CUresult fake_mem_alloc(CUdeviceptr* address, std::size_t bytes) {
  if (current_context() == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  return allocate(address, bytes);
}

CUresult fake_mem_free(CUdeviceptr address) { return release(address); }

// Stream-ordered allocation happens at once, also under capture: captured kernels never run.
CUresult fake_mem_alloc_async(CUdeviceptr* address, std::size_t bytes, CUstream stream) {
  if (const CUresult r = check_stream(stream); r != CUDA_SUCCESS) return r;
  return allocate(address, bytes);
}

CUresult fake_mem_free_async(CUdeviceptr address, CUstream stream) {
  if (const CUresult r = check_stream(stream); r != CUDA_SUCCESS) return r;
  return release(address);
}

CUresult fake_memcpy_htod(CUdeviceptr to, const void* from, std::size_t bytes) {
  return copy(reinterpret_cast<void*>(to), from, bytes, to, 0);
}

CUresult fake_memcpy_dtoh(void* to, CUdeviceptr from, std::size_t bytes) {
  return copy(to, reinterpret_cast<const void*>(from), bytes, 0, from);
}

CUresult fake_memset_d8(CUdeviceptr address, unsigned char value, std::size_t count) {
  return fill(address, value, count);
}

CUresult fake_memcpy_htod_async(CUdeviceptr to, const void* from, std::size_t bytes, CUstream stream) {
  if (const CUresult r = immediate_stream(stream); r != CUDA_SUCCESS) return r;
  return fake_memcpy_htod(to, from, bytes);
}

CUresult fake_memcpy_dtoh_async(void* to, CUdeviceptr from, std::size_t bytes, CUstream stream) {
  if (const CUresult r = immediate_stream(stream); r != CUDA_SUCCESS) return r;
  return fake_memcpy_dtoh(to, from, bytes);
}

CUresult fake_memcpy_dtod_async(CUdeviceptr to, CUdeviceptr from, std::size_t bytes, CUstream stream) {
  if (const CUresult r = immediate_stream(stream); r != CUDA_SUCCESS) return r;
  return copy(reinterpret_cast<void*>(to), reinterpret_cast<const void*>(from), bytes, to, from);
}

CUresult fake_memset_d8_async(CUdeviceptr address, unsigned char value, std::size_t count, CUstream stream) {
  if (const CUresult r = immediate_stream(stream); r != CUDA_SUCCESS) return r;
  return fill(address, value, count);
}

CUresult fake_memset_d32_async(CUdeviceptr address, unsigned int value, std::size_t count, CUstream stream) {
  if (const CUresult r = immediate_stream(stream); r != CUDA_SUCCESS) return r;
  return fill(address, value, count);
}

CUresult fake_event_create(CUevent* event, unsigned int flags) {
  constexpr unsigned kKnown = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
  if (event == nullptr || (flags & ~kKnown) != 0) return CUDA_ERROR_INVALID_VALUE;
  Context* ctx = current_context();
  if (ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  std::lock_guard lock(g.mutex);
  Event& e = g.events.emplace_back();
  e.ctx = ctx;
  e.timing = (flags & CU_EVENT_DISABLE_TIMING) == 0;
  *event = reinterpret_cast<CUevent>(&e);
  return CUDA_SUCCESS;
}

CUresult fake_event_destroy(CUevent event) {
  if (event == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard lock(g.mutex);
  auto* e = reinterpret_cast<Event*>(event);
  if (!e->alive) return CUDA_ERROR_INVALID_HANDLE;
  e->alive = false;
  return CUDA_SUCCESS;
}

CUresult fake_event_record(CUevent event, CUstream stream) {
  if (event == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard lock(g.mutex);
  auto* e = reinterpret_cast<Event*>(event);
  if (!e->alive) return CUDA_ERROR_INVALID_HANDLE;
  Stream* s = nullptr;
  if (const CUresult r = resolve_stream(stream, s); r != CUDA_SUCCESS) return r;
  if (s->capture != nullptr) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;  // event nodes are not modelled
  e->recorded = true;
  e->time_us = s->clock_us;
  return CUDA_SUCCESS;
}

CUresult fake_event_synchronize(CUevent event) {
  if (event == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard lock(g.mutex);
  return reinterpret_cast<Event*>(event)->alive ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult fake_event_elapsed_time(float* milliseconds, CUevent start, CUevent end) {
  if (milliseconds == nullptr || start == nullptr || end == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(g.mutex);
  const auto* a = reinterpret_cast<Event*>(start);
  const auto* b = reinterpret_cast<Event*>(end);
  if (!a->alive || !b->alive || !a->recorded || !b->recorded || !a->timing || !b->timing) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  *milliseconds = static_cast<float>((b->time_us - a->time_us) / 1000.0);
  return CUDA_SUCCESS;
}

CUresult fake_get_proc_address(const char* symbol, void** function, int cuda_version, cuuint64_t flags,
                               CUdriverProcAddressQueryResult* status);

}  // extern "C"
#pragma GCC visibility pop

// Every entry point: the API name tritonrt asks cuGetProcAddress for, and its implementation.
// The prototype checked is the one cuda.h gives the name (cuMemAlloc -> cuMemAlloc_v2).
#define FAKE_CUDA_ENTRIES(X)                                        \
  X(cuGetProcAddress, fake_get_proc_address)                        \
  X(cuInit, fake_init)                                              \
  X(cuDriverGetVersion, fake_driver_get_version)                    \
  X(cuGetErrorName, fake_get_error_name)                            \
  X(cuGetErrorString, fake_get_error_string)                        \
  X(cuDeviceGet, fake_device_get)                                   \
  X(cuDeviceGetCount, fake_device_get_count)                        \
  X(cuDeviceGetAttribute, fake_device_get_attribute)                \
  X(cuDeviceGetName, fake_device_get_name)                          \
  X(cuDeviceTotalMem, fake_device_total_mem)                        \
  X(cuDevicePrimaryCtxRetain, fake_primary_ctx_retain)              \
  X(cuDevicePrimaryCtxRelease, fake_primary_ctx_release)            \
  X(cuCtxGetCurrent, fake_ctx_get_current)                          \
  X(cuCtxSetCurrent, fake_ctx_set_current)                          \
  X(cuCtxGetDevice, fake_ctx_get_device)                            \
  X(cuCtxPushCurrent, fake_ctx_push_current)                        \
  X(cuCtxPopCurrent, fake_ctx_pop_current)                          \
  X(cuCtxSynchronize, fake_ctx_synchronize)                         \
  X(cuStreamCreate, fake_stream_create)                             \
  X(cuStreamDestroy, fake_stream_destroy)                           \
  X(cuStreamSynchronize, fake_stream_synchronize)                   \
  X(cuStreamGetCtx, fake_stream_get_ctx)                            \
  X(cuStreamIsCapturing, fake_stream_is_capturing)                  \
  X(cuStreamBeginCapture, fake_stream_begin_capture)                \
  X(cuStreamEndCapture, fake_stream_end_capture)                    \
  X(cuGraphInstantiateWithFlags, fake_graph_instantiate_with_flags) \
  X(cuGraphLaunch, fake_graph_launch)                               \
  X(cuGraphDestroy, fake_graph_destroy)                             \
  X(cuGraphExecDestroy, fake_graph_exec_destroy)                    \
  X(cuModuleLoadData, fake_module_load_data)                        \
  X(cuModuleUnload, fake_module_unload)                             \
  X(cuModuleGetFunction, fake_module_get_function)                  \
  X(cuFuncGetAttribute, fake_func_get_attribute)                    \
  X(cuFuncSetAttribute, fake_func_set_attribute)                    \
  X(cuFuncSetCacheConfig, fake_func_set_cache_config)               \
  X(cuLaunchKernel, fake_launch_kernel)                             \
  X(cuLaunchKernelEx, fake_launch_kernel_ex)                        \
  X(cuTensorMapEncodeTiled, fake_tensor_map_encode_tiled)           \
  X(cuMemAlloc, fake_mem_alloc)                                     \
  X(cuMemFree, fake_mem_free)                                       \
  X(cuMemAllocAsync, fake_mem_alloc_async)                          \
  X(cuMemFreeAsync, fake_mem_free_async)                            \
  X(cuMemcpyHtoD, fake_memcpy_htod)                                 \
  X(cuMemcpyDtoH, fake_memcpy_dtoh)                                 \
  X(cuMemsetD8, fake_memset_d8)                                     \
  X(cuMemcpyHtoDAsync, fake_memcpy_htod_async)                      \
  X(cuMemcpyDtoHAsync, fake_memcpy_dtoh_async)                      \
  X(cuMemcpyDtoDAsync, fake_memcpy_dtod_async)                      \
  X(cuMemsetD8Async, fake_memset_d8_async)                          \
  X(cuMemsetD32Async, fake_memset_d32_async)                        \
  X(cuEventCreate, fake_event_create)                               \
  X(cuEventDestroy, fake_event_destroy)                             \
  X(cuEventRecord, fake_event_record)                               \
  X(cuEventSynchronize, fake_event_synchronize)                     \
  X(cuEventElapsedTime, fake_event_elapsed_time)

namespace {

struct Entry {
  const char* name;
  void* function;
};

// `#api` is the name as written (the macro argument is not expanded there); `::api` is the
// cuda.h prototype, which static_cast makes the implementation match exactly.
#define FAKE_CUDA_TABLE_ROW(api, impl) {#api, reinterpret_cast<void*>(static_cast<decltype(&::api)>(&impl))},
const Entry kEntries[] = {FAKE_CUDA_ENTRIES(FAKE_CUDA_TABLE_ROW)};
#undef FAKE_CUDA_TABLE_ROW

}  // namespace

// The cudaVersion is not consulted: each name resolves to the variant with cuda.h's
// prototype, which is what tritonrt asks for (at 12.0) and what the exported symbols are.
CUresult fake_get_proc_address(const char* symbol, void** function, int /*cuda_version*/, cuuint64_t /*flags*/,
                               CUdriverProcAddressQueryResult* status) {
  if (symbol == nullptr || function == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const auto it = std::find_if(std::begin(kEntries), std::end(kEntries),
                               [&](const Entry& e) { return std::strcmp(e.name, symbol) == 0; });
  const bool found = it != std::end(kEntries);
  *function = found ? it->function : nullptr;
  if (status != nullptr) *status = found ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return found ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

// The same functions as exported symbols, under the names cuda.h's prototypes link to
// (cuMemAlloc_v2, cuGetProcAddress_v2, ...), for dlsym and for programs linked against -lcuda.
#define FAKE_CUDA_EXPORT_ROW(api, impl) extern "C" FAKE_CUDA_EXPORT decltype(::api) api __attribute__((alias(#impl)));
FAKE_CUDA_ENTRIES(FAKE_CUDA_EXPORT_ROW)
#undef FAKE_CUDA_EXPORT_ROW

// --- Inspection API (fake_cuda.h) ---

extern "C" {

FAKE_CUDA_EXPORT void fake_cuda_get_stats(FakeCudaStats* out) {
  std::lock_guard lock(g.mutex);
  *out = g.stats;
  out->live_allocations = g.allocations.size();
}

FAKE_CUDA_EXPORT std::size_t fake_cuda_last_launches(FakeCudaLaunch* out, std::size_t max) {
  std::lock_guard lock(g.mutex);
  const std::uint64_t kept = std::min<std::uint64_t>(g.recorded, FAKE_CUDA_RING_SIZE);
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kept, max));
  for (std::size_t i = 0; i < n; ++i) out[i] = g.ring[(g.recorded - n + i) % FAKE_CUDA_RING_SIZE];
  return n;
}

FAKE_CUDA_EXPORT void fake_cuda_reset(void) {
  std::lock_guard lock(g.mutex);
  g.stats = {};
  g.recorded = 0;
  g.recording = true;
  g.max_threads = g.env_max_threads;
  g.default_duration_us = kDefaultKernelUs;
  g.program_cost_us = 0;
  for (auto& [name, us] : g.durations) us = -1.0;
}

FAKE_CUDA_EXPORT void fake_cuda_set_program_cost_us(double microseconds) {
  std::lock_guard lock(g.mutex);
  g.program_cost_us = microseconds;
}

FAKE_CUDA_EXPORT void fake_cuda_set_kernel_duration_us(const char* kernel, double microseconds) {
  std::lock_guard lock(g.mutex);
  if (kernel == nullptr) {
    g.default_duration_us = microseconds;
  } else {
    g.durations.insert_or_assign(kernel, microseconds);
  }
}

FAKE_CUDA_EXPORT void fake_cuda_set_max_threads_per_block(int threads) {
  std::lock_guard lock(g.mutex);
  g.max_threads = threads > 0 ? std::min(threads, kMaxThreadsPerBlock) : g.env_max_threads;
}

FAKE_CUDA_EXPORT void fake_cuda_set_recording(int enabled) {
  std::lock_guard lock(g.mutex);
  g.recording = enabled != 0;
}

}  // extern "C"

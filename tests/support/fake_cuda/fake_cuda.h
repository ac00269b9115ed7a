/* Inspection API of the stand-in CUDA driver (tests/support/fake_cuda, built as libcuda.so.1):
 * lets CPU-only tests see what tritonrt asked the driver to do.
 *
 * Tests do not link the library: tritonrt dlopens it (put its directory on LD_LIBRARY_PATH)
 * and fake_cuda_api() finds these functions in the copy already loaded, so a test inspects
 * exactly the driver tritonrt uses. Plain C, so any test can include it. */
#ifndef TRITONRT_FAKE_CUDA_H
#define TRITONRT_FAKE_CUDA_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FAKE_CUDA_NAME_SIZE 128        /* kernel names longer than this are truncated in records */
#define FAKE_CUDA_MAX_PARAMS 128       /* kernels with more parameters cannot be launched */
#define FAKE_CUDA_MAX_PARAM_BYTES 4096 /* nor kernels whose parameter buffer is larger */
#define FAKE_CUDA_RING_SIZE 1024       /* records kept: the most recent launches */

/* One kernel launch, as the driver received it. */
typedef struct FakeCudaLaunch {
  uint64_t sequence;              /* 1-based among all launches since the last reset, recorded or not */
  void* function;                 /* the CUfunction */
  void* stream;                   /* as passed (NULL: the legacy default stream) */
  void* context;                  /* the context the launch ran in */
  char name[FAKE_CUDA_NAME_SIZE]; /* the kernel's symbol, NUL-terminated */
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t shared_bytes; /* dynamic shared memory */
  uint32_t cluster[3];   /* {0, 0, 0} unless cuLaunchKernelEx set a cluster dimension */
  int32_t pdl;           /* programmatic stream serialization (PDL) requested */
  int32_t cooperative;   /* cooperative launch requested */
  int32_t via_ex;        /* launched with cuLaunchKernelEx rather than cuLaunchKernel */
  int32_t from_graph;    /* replayed by cuGraphLaunch from a captured launch */
  double start_us;       /* simulated start and end on the stream's clock */
  double end_us;
  uint32_t param_count;                        /* from the cubin's EIATTR_KPARAM_INFO entries */
  uint32_t param_bytes;                        /* size of the kernel's parameter buffer */
  uint16_t param_offset[FAKE_CUDA_MAX_PARAMS]; /* parameter i lives at params[param_offset[i]] */
  uint16_t param_size[FAKE_CUDA_MAX_PARAMS];
  unsigned char params[FAKE_CUDA_MAX_PARAM_BYTES]; /* the parameter buffer as the kernel sees it */
} FakeCudaLaunch;

/* What cuTensorMapEncodeTiled was asked, as the fake writes it at the start of the 128-byte
 * CUtensorMap (dimensions innermost first, as the driver takes them). */
#define FAKE_CUDA_TENSOR_MAP_MAGIC 0x544d4150u /* "TMAP" */
typedef struct FakeCudaTensorMap {
  uint32_t magic;
  uint8_t data_type; /* CUtensorMapDataType */
  uint8_t rank;
  uint8_t swizzle; /* CUtensorMapSwizzle */
  uint8_t fill;    /* CUtensorMapFloatOOBfill */
  uint8_t interleave;
  uint8_t l2_promotion;
  uint8_t element_strides[5];
  uint8_t unused;
  uint64_t address;
  uint64_t dims[5];
  uint64_t strides[4]; /* bytes, of dimensions 1 to rank - 1 */
  uint32_t box[5];
} FakeCudaTensorMap;

/* Counters since the last reset (live_allocations: now). */
typedef struct FakeCudaStats {
  uint64_t launches;          /* kernels run, graph replays included; captured launches are not */
  uint64_t captured_launches; /* launches recorded into a graph by stream capture */
  uint64_t module_loads;      /* successful cuModuleLoadData calls: a cache miss loads a module */
  uint64_t module_unloads;
  uint64_t live_allocations; /* device allocations not freed yet, for leak checks */
  uint64_t tensor_maps_encoded; /* successful cuTensorMapEncodeTiled calls */
} FakeCudaStats;

void fake_cuda_get_stats(FakeCudaStats* out);
/* Copies the most recent recorded launches, oldest first, at most `max`; returns how many. */
size_t fake_cuda_last_launches(FakeCudaLaunch* out, size_t max);
/* Clears counters and records and restores every setting below; live handles stay valid. */
void fake_cuda_reset(void);
/* Simulated run time of a kernel (by symbol name; NULL sets the default, 1 us), which
 * advances its stream's clock and so what events measure. */
void fake_cuda_set_kernel_duration_us(const char* kernel, double microseconds);
/* Time added per program of a launch's grid (default 0): configs that launch fewer programs
 * measure faster, so an autotuner's choice can be predicted. */
void fake_cuda_set_program_cost_us(double microseconds);
/* What cuFuncGetAttribute(MAX_THREADS_PER_BLOCK) answers and launches are held to;
 * 0 restores the default (TRITONRT_FAKE_CUDA_MAX_THREADS, else 1024). */
void fake_cuda_set_max_threads_per_block(int threads);
/* Recording off keeps launches as cheap as counting them (for profiling the caller). */
void fake_cuda_set_recording(int enabled);

/* The inspection API, looked up in the libcuda.so.1 this process already loaded. */
typedef struct FakeCudaApi {
  void (*get_stats)(FakeCudaStats*);
  size_t (*last_launches)(FakeCudaLaunch*, size_t);
  void (*reset)(void);
  void (*set_kernel_duration_us)(const char*, double);
  void (*set_max_threads_per_block)(int);
  void (*set_recording)(int);
  void (*set_program_cost_us)(double);
} FakeCudaApi;

/* Fills `api`; returns 0 when no libcuda is loaded yet (nothing called the driver) or the
 * loaded one is not the fake (a real driver came first on the library path). */
static inline int fake_cuda_api(FakeCudaApi* api) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_NOW);
  if (lib == NULL) return 0;
  api->get_stats = (void (*)(FakeCudaStats*))dlsym(lib, "fake_cuda_get_stats");
  api->last_launches = (size_t(*)(FakeCudaLaunch*, size_t))dlsym(lib, "fake_cuda_last_launches");
  api->reset = (void (*)(void))dlsym(lib, "fake_cuda_reset");
  api->set_kernel_duration_us = (void (*)(const char*, double))dlsym(lib, "fake_cuda_set_kernel_duration_us");
  api->set_max_threads_per_block = (void (*)(int))dlsym(lib, "fake_cuda_set_max_threads_per_block");
  api->set_recording = (void (*)(int))dlsym(lib, "fake_cuda_set_recording");
  api->set_program_cost_us = (void (*)(double))dlsym(lib, "fake_cuda_set_program_cost_us");
  dlclose(lib); /* only drops the reference NOLOAD took: the driver's own handle keeps it loaded */
  return api->get_stats && api->last_launches && api->reset && api->set_kernel_duration_us &&
         api->set_max_threads_per_block && api->set_recording && api->set_program_cost_us;
}

/* The bytes of parameter `i` of a recorded launch (param_size[i] of them). */
static inline const unsigned char* fake_cuda_param(const FakeCudaLaunch* launch, unsigned i) {
  return launch->params + launch->param_offset[i];
}

#ifdef __cplusplus
}
#endif

#endif /* TRITONRT_FAKE_CUDA_H */

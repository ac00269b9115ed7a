// Shared pieces of the GPU tests: a fixture that skips without a GPU, device buffers and
// streams owned RAII-style through tritonrt's own dlopen'd driver table, random inputs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "test_driver.h"
#include "tritonrt/tritonrt.h"

namespace tritonrt::test {

using Driver = TestDriver;

inline const std::string kGpuKernels = std::string(TRITONRT_TEST_KERNELS) + "/gpu_kernels.py";

#define GPU_CHECK(call) TRITONRT_CU_CHECK(::tritonrt::test::Driver::get(), call, "GPU test")

/// Whether this machine can run the GPU tests, and if not, why (probed once).
struct GpuAvailability {
  int devices = 0;
  std::string why_not;  ///< empty when there is a GPU
};

inline const GpuAvailability& gpu_availability() {
  static const GpuAvailability availability = [] {
    GpuAvailability a;
    try {
      auto& d = Driver::get();
      const CUresult r = d.cuDeviceGetCount(&a.devices);
      if (r != CUDA_SUCCESS) {
        a.why_not = "cuDeviceGetCount failed with CUresult " + std::to_string(static_cast<int>(r));
      } else if (a.devices == 0) {
        a.why_not = "the CUDA driver is present but reports no GPU";
      }
    } catch (const DriverError& e) {
      a.why_not = std::string("no CUDA driver: ") + e.what();
    }
    return a;
  }();
  return availability;
}

/// The primary context of `device`, retained once per process and kept for its lifetime.
inline CUcontext primary_context(int device) {
  static std::mutex mutex;
  static std::vector<CUcontext> contexts;
  std::lock_guard lock(mutex);
  if (contexts.empty()) contexts.resize(static_cast<std::size_t>(gpu_availability().devices), nullptr);
  auto& ctx = contexts.at(static_cast<std::size_t>(device));
  if (ctx == nullptr) {
    CUdevice dev = 0;
    GPU_CHECK(cuDeviceGet(&dev, device));
    GPU_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  }
  return ctx;
}

/// Makes `device`'s primary context current on the calling thread.
inline CUcontext use_device(int device) {
  const CUcontext ctx = primary_context(device);
  GPU_CHECK(cuCtxSetCurrent(ctx));
  return ctx;
}

/// Compute capability as major * 10 + minor, e.g. 90 for Hopper.
inline int compute_capability(int device) {
  CUdevice dev = 0;
  GPU_CHECK(cuDeviceGet(&dev, device));
  const auto [major, minor] = Driver::get().compute_capability(dev);
  return major * 10 + minor;
}

/// The device's streaming multiprocessors, as persistent kernels size their grids.
inline int multiprocessor_count(int device = 0) {
  CUdevice dev = 0;
  GPU_CHECK(cuDeviceGet(&dev, device));
  int count = 0;
  GPU_CHECK(cuDeviceGetAttribute(&count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  return count;
}

/// Runs the driver calls of its scope in `ctx`, whatever the thread's current context is.
class ContextScope {
 public:
  explicit ContextScope(CUcontext ctx) { GPU_CHECK(cuCtxPushCurrent(ctx)); }
  ~ContextScope() {
    CUcontext popped = nullptr;
    (void)Driver::get().cuCtxPopCurrent(&popped);
  }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;
};

/// A non-blocking stream in the primary context of a device.
class Stream {
 public:
  explicit Stream(int device = 0) : ctx_(primary_context(device)) {
    ContextScope in(ctx_);
    GPU_CHECK(cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
  }
  ~Stream() {
    if (stream_ != nullptr) {
      ContextScope in(ctx_);
      (void)Driver::get().cuStreamSynchronize(stream_);
      (void)Driver::get().cuStreamDestroy(stream_);
    }
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  CUstream get() const { return stream_; }
  void sync() const { GPU_CHECK(cuStreamSynchronize(stream_)); }

 private:
  CUcontext ctx_;
  CUstream stream_ = nullptr;
};

/// Device memory for `count` elements of T (raw bits for fp16/bf16/fp8: uint16_t/uint8_t).
/// Host transfers and poisoning are ordered before/after all streams of the context with a
/// context synchronize, since launches run on non-blocking streams.
template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t count, int device = 0) : ctx_(primary_context(device)), count_(count) {
    ContextScope in(ctx_);
    GPU_CHECK(cuMemAlloc(&ptr_, bytes() == 0 ? 1 : bytes()));
  }
  explicit DeviceBuffer(const std::vector<T>& values, int device = 0) : DeviceBuffer(values.size(), device) {
    upload(values);
  }
  ~DeviceBuffer() {
    if (ptr_ != 0) {
      ContextScope in(ctx_);
      (void)Driver::get().cuCtxSynchronize();
      (void)Driver::get().cuMemFree(ptr_);
    }
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }
  CUdeviceptr address() const { return ptr_; }
  T* get() const { return reinterpret_cast<T*>(ptr_); }  // typed device pointer argument
  DevicePtr as(DType dtype) const { return DevicePtr{reinterpret_cast<const void*>(ptr_), dtype}; }

  void upload(const std::vector<T>& values) {
    ASSERT_EQ(values.size(), count_);
    ContextScope in(ctx_);
    GPU_CHECK(cuCtxSynchronize());
    if (!values.empty()) GPU_CHECK(cuMemcpyHtoD(ptr_, values.data(), bytes()));
    GPU_CHECK(cuCtxSynchronize());
  }
  /// Fills every byte with 0xFF, so that an element nobody wrote is seen (NaN for floats, -1 for ints).
  void poison() {
    ContextScope in(ctx_);
    GPU_CHECK(cuCtxSynchronize());
    GPU_CHECK(cuMemsetD8(ptr_, 0xFF, bytes()));
    GPU_CHECK(cuCtxSynchronize());
  }
  std::vector<T> download() const {
    std::vector<T> out(count_);
    ContextScope in(ctx_);
    GPU_CHECK(cuCtxSynchronize());
    if (count_ != 0) GPU_CHECK(cuMemcpyDtoH(out.data(), ptr_, bytes()));
    return out;
  }

 private:
  CUcontext ctx_;
  std::size_t count_;
  CUdeviceptr ptr_ = 0;
};

/// True when every byte of `v` is 0xFF (the poison).
template <class T>
bool is_poison(const T& v) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  for (unsigned char c : b) {
    if (c != 0xFF) return false;
  }
  return true;
}

/// Random inputs: a fresh seed per test, printed with any failure so it can be replayed.
class Random {
 public:
  Random() : seed_(std::random_device{}()), engine_(seed_) {}
  std::uint64_t seed() const { return seed_; }
  std::mt19937_64& engine() { return engine_; }
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(engine_); }
  template <class I>
  I integer(I lo, I hi) {
    return std::uniform_int_distribution<I>(lo, hi)(engine_);
  }
  /// Never zero: a magnitude in [lo, hi) with a random sign.
  double signed_magnitude(double lo, double hi) { return (engine_() & 1 ? -1.0 : 1.0) * uniform(lo, hi); }

 private:
  std::uint64_t seed_;
  std::mt19937_64 engine_;
};

/// Collects element mismatches; reports how many and the first few, with their indices.
class Mismatches {
 public:
  explicit Mismatches(std::string what) : what_(std::move(what)) {}
  template <class Got, class Want>
  void add(std::size_t index, const Got& got, const Want& want) {
    if (count_++ < 8) {
      std::ostringstream s;
      s.precision(17);
      s << "\n  [" << index << "] got " << got << ", expected " << want;
      text_ += s.str();
    }
  }
  /// An element past the end that a masked kernel must not have written.
  void add_unpoisoned(std::size_t index) {
    if (count_++ < 8) text_ += "\n  [" + std::to_string(index) + "] was written but lies outside the kernel's range";
  }
  std::size_t count() const { return count_; }
  ::testing::AssertionResult result() const {
    if (count_ == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << what_ << ": " << count_ << " wrong element(s)" << text_;
  }

 private:
  std::string what_;
  std::string text_;
  std::size_t count_ = 0;
};

/// Checks C (M x N, row-major, then poisoned guard elements) against A x B in double, for
/// matmuls with fp32 accumulation: every element finite, nothing written past M x N, and the
/// relative L2 error of the whole product below 1e-2. `a(i, k)`, `b(k, j)` read the operands
/// (whatever their layout), `c(x)` the value of C's element x as double.
template <class C, class A, class B, class Read>
::testing::AssertionResult matches_product(const std::string& what, const std::vector<C>& got, int M, int N, int K,
                                           const A& a, const B& b, const Read& c) {
  double err2 = 0, ref2 = 0;
  Mismatches bad(what + " (non-finite or unwritten)");
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int k = 0; k < K; ++k) want += a(i, k) * b(k, j);
      const std::size_t x = static_cast<std::size_t>(i) * N + j;
      const double value = c(got[x]);
      if (!std::isfinite(value)) bad.add(x, value, want);
      err2 += (value - want) * (value - want);
      ref2 += want * want;
    }
  }
  for (std::size_t x = static_cast<std::size_t>(M) * N; x < got.size(); ++x) {
    if (!is_poison(got[x])) bad.add_unpoisoned(x);
  }
  if (!bad.result()) return bad.result();
  const double relative = std::sqrt(err2 / ref2);
  if (relative < 1e-2) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": relative L2 error of the product " << relative << ", not < 1e-2";
}

/// Every GPU test derives from this: it skips without a GPU and makes device 0 current.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto& a = gpu_availability();
    if (!a.why_not.empty()) GTEST_SKIP() << "needs a CUDA GPU: " << a.why_not;
    use_device(0);
    capability_ = compute_capability(0);
    RecordProperty("seed", std::to_string(random_.seed()));
    trace_.emplace(__FILE__, __LINE__, "random seed " + std::to_string(random_.seed()));
  }
  void TearDown() override { trace_.reset(); }

  Driver& driver() { return Driver::get(); }
  int capability() const { return capability_; }
  Random& rng() { return random_; }

 private:
  int capability_ = 0;
  Random random_;
  std::optional<::testing::ScopedTrace> trace_;
};

}  // namespace tritonrt::test

/// Skips the current test unless device 0 has at least compute capability `cc` (e.g. 90).
#define REQUIRE_CAPABILITY(cc, what)                                                      \
  if (capability() < (cc))                                                                \
  GTEST_SKIP() << (what) << " needs compute capability " << (cc) / 10 << "." << (cc) % 10 \
               << " or newer; device 0 has " << capability() / 10 << "." << capability() % 10

// The launch machinery around a kernel: concurrent first calls, CUDA graph capture (with
// stream-ordered scratch), several devices in one process, and grid edge cases.

#include <algorithm>
#include <cstdint>
#include <latch>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gpu_test.h"

namespace tritonrt::test {
namespace {

using Launch = GpuTest;

constexpr std::size_t kGuard = 67;

Grid blocks_over_n(const BoundArgs& a) { return Grid{cdiv(a.integer("n"), a.integer("BLOCK"))}; }

// Checks out[0, n) == want(i) and that everything past n is still poison.
template <class T, class Want>
::testing::AssertionResult elements_match(const std::vector<T>& out, std::size_t n, Want want,
                                          const std::string& what) {
  Mismatches bad(what);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (i < n) {
      const T w = want(i);
      if (!(out[i] == w)) bad.add(i, out[i], w);
    } else if (!is_poison(out[i])) {
      bad.add_unpoisoned(i);
    }
  }
  return bad.result();
}

// ---------------------------------------------------------------------------------------------
// 9. Sixteen threads making first calls at once.

TEST_F(Launch, SixteenThreadsMakeFirstCallsAtOnce) {
  // axpb_kernel is launched by no other test, so these are the process's first calls of it.
  // Thread t passes a = t + 1 (so a == 1 is constexpr, a == 16 is divisible by 16, the rest
  // plain) and three output addresses of different alignment: several specializations are
  // compiled and loaded concurrently while other threads already launch them.
  constexpr int kThreads = 16;
  constexpr int n = 4099;  // n * 4 bytes % 16 != 0: out + n and out + 2n are not 16-aligned
  constexpr int kRounds = 3;
  std::latch start(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        use_device(0);
        Random r;
        std::vector<std::int32_t> x(n);
        for (auto& v : x) v = r.integer<std::int32_t>(-10000, 10000);
        const std::int32_t a = t + 1;
        std::int32_t b[kRounds];
        for (auto& v : b) v = r.integer<std::int32_t>(-1000000, 1000000);
        Stream s;
        DeviceBuffer<std::int32_t> dx(x), dout(static_cast<std::size_t>(n) * kRounds + kGuard);
        dout.poison();
        start.arrive_and_wait();
        auto& fn = JitFunction::get(kGpuKernels, "axpb_kernel");
        const LaunchConfig config{.grid_fn = blocks_over_n, .stream = s.get()};
        for (int round = 0; round < kRounds; ++round) {
          fn(config, dx.get(), dout.get() + round * n, n, a, b[round], 512);
        }
        s.sync();
        const auto out = dout.download();
        const auto result = elements_match(
            out, static_cast<std::size_t>(n) * kRounds, [&](std::size_t i) { return x[i % n] * a + b[i / n]; },
            "thread " + std::to_string(t) + " (seed " + std::to_string(r.seed()) + ")");
        if (!result) errors[t] = result.message();
      } catch (const std::exception& e) {
        errors[t] = "thread " + std::to_string(t) + " threw: " + e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& e : errors) EXPECT_TRUE(e.empty()) << e;
}

// ---------------------------------------------------------------------------------------------
// 10. CUDA graphs.

// Owns a captured graph and its executable instance.
struct Graph {
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  ~Graph() {
    if (exec != nullptr) (void)Driver::get().cuGraphExecDestroy(exec);
    if (graph != nullptr) (void)Driver::get().cuGraphDestroy(graph);
  }
};

TEST_F(Launch, CudaGraphReplaysWithNewData) {
  // A pointwise add, then (on Hopper) a kernel that needs global scratch, reading its output:
  // the scratch is allocated stream-ordered, so capture turns it into graph memory nodes.
  const bool with_scratch = capability() >= 90;
  const int M = 100, N = 196, n = M * N;
  DeviceBuffer<float> x(n), y(n), sum(n + kGuard), scaled(n + kGuard);
  const float scale = static_cast<float>(rng().signed_magnitude(0.5, 4.0));
  Stream s;
  auto& add = JitFunction::get(kGpuKernels, "add_kernel");
  auto& tma = JitFunction::get(kGpuKernels, "tma_scale_kernel");
  const LaunchConfig add_config{.grid_fn = blocks_over_n, .stream = s.get()};
  const LaunchConfig tma_config{.grid = {cdiv(M, 32), cdiv(N, 32)}, .stream = s.get()};
  auto enqueue = [&] {
    add(add_config, x.get(), y.get(), sum.get(), n, 1024, false);
    if (with_scratch) tma(tma_config, sum.get(), scaled.get(), M, N, scale, 32, 32);
  };
  std::vector<float> hx(n), hy(n);
  auto new_inputs = [&] {
    for (auto& v : hx) v = static_cast<float>(rng().signed_magnitude(0.5, 100.0));
    for (auto& v : hy) v = static_cast<float>(rng().signed_magnitude(0.5, 100.0));
    x.upload(hx);
    y.upload(hy);
    sum.poison();
    scaled.poison();
  };
  auto check = [&](const char* when) {
    SCOPED_TRACE(when);
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i) want[i] = static_cast<float>(static_cast<double>(hx[i]) + hy[i]);
    EXPECT_TRUE(elements_match(
        sum.download(), n, [&](std::size_t i) { return want[i]; }, "add in graph"));
    if (with_scratch) {
      EXPECT_TRUE(elements_match(
          scaled.download(), n, [&](std::size_t i) { return static_cast<float>(static_cast<double>(want[i]) * scale); },
          "tma_scale (global scratch) in graph"));
    }
  };

  // Outside a graph first: compiled and loaded before the capture, and correct.
  new_inputs();
  enqueue();
  s.sync();
  check("eager launch");

  new_inputs();
  Graph g;
  GPU_CHECK(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  try {
    enqueue();
  } catch (...) {
    CUgraph broken = nullptr;
    (void)driver().cuStreamEndCapture(s.get(), &broken);
    if (broken != nullptr) (void)driver().cuGraphDestroy(broken);
    throw;
  }
  GPU_CHECK(cuStreamEndCapture(s.get(), &g.graph));
  GPU_CHECK(cuGraphInstantiate(&g.exec, g.graph, 0));
  s.sync();
  // Captured launches do not run: the outputs are still poison.
  EXPECT_TRUE(elements_match(
      sum.download(), 0, [](std::size_t) { return 0.0f; }, "sum after capture"));

  for (const char* replay : {"first replay", "second replay with new data", "third replay with new data"}) {
    GPU_CHECK(cuGraphLaunch(g.exec, s.get()));
    s.sync();
    check(replay);
    new_inputs();
  }
}

// ---------------------------------------------------------------------------------------------
// 11. Two devices in one process.

// Launches add_kernel on `device` through `stream` (nullptr: the current context's default
// stream) with fresh data and returns a checker for its result.
struct DeviceRun {
  int device;
  std::vector<float> x, y;
  std::unique_ptr<DeviceBuffer<float>> dx, dy, dout;

  DeviceRun(int dev, Random& r, int n) : device(dev), x(n), y(n) {
    for (auto& v : x) v = static_cast<float>(r.signed_magnitude(0.5, 100.0));
    for (auto& v : y) v = static_cast<float>(r.signed_magnitude(0.5, 100.0));
    dx = std::make_unique<DeviceBuffer<float>>(x, dev);
    dy = std::make_unique<DeviceBuffer<float>>(y, dev);
    dout = std::make_unique<DeviceBuffer<float>>(x.size() + kGuard, dev);
    dout->poison();
  }
  void launch(void* stream) {
    auto& add = JitFunction::get(kGpuKernels, "add_kernel");
    add({.grid_fn = blocks_over_n, .stream = stream}, dx->get(), dy->get(), dout->get(), static_cast<int>(x.size()),
        1024, false);
  }
  ::testing::AssertionResult check() const {
    return elements_match(
        dout->download(), x.size(), [&](std::size_t i) { return static_cast<float>(static_cast<double>(x[i]) + y[i]); },
        "add_kernel on device " + std::to_string(device));
  }
};

int device_count_or_skip_reason(std::string& why) {
  const int count = gpu_availability().devices;
  if (count < 2) why = "needs two GPUs; this machine has " + std::to_string(count);
  return count;
}

TEST_F(Launch, TwoDevicesInOneProcess) {
  std::string why;
  if (device_count_or_skip_reason(why) < 2) GTEST_SKIP() << why;
  const int n = 100003;
  Stream s0(0), s1(1);
  // Interleaved, without synchronizing in between: each device's module must be its own.
  DeviceRun a(0, rng(), n), b(1, rng(), n), c(0, rng(), n), d(1, rng(), n);
  a.launch(s0.get());
  b.launch(s1.get());
  c.launch(s0.get());
  d.launch(s1.get());
  s0.sync();
  s1.sync();
  EXPECT_TRUE(a.check());
  EXPECT_TRUE(b.check());
  EXPECT_TRUE(c.check());
  EXPECT_TRUE(d.check());

  // The artifact a launch on each device runs: compiled for that device's architecture.
  auto& add = JitFunction::get(kGpuKernels, "add_kernel");
  for (int dev = 0; dev < 2; ++dev) {
    Stream& st = dev == 0 ? s0 : s1;
    DeviceRun& run = dev == 0 ? a : b;
    const auto art = add.artifact_for({.grid_fn = blocks_over_n, .stream = st.get()}, run.dx->get(), run.dy->get(),
                                      run.dout->get(), n, 1024, false);
    ASSERT_NE(art, nullptr);
    EXPECT_EQ(art->metadata.target.arch, std::to_string(compute_capability(dev))) << "device " << dev;
    EXPECT_FALSE(art->binary.empty());
  }

  // The null stream is the current context's: device 1's once its context is current.
  use_device(1);
  DeviceRun e(1, rng(), n);
  e.launch(nullptr);
  GPU_CHECK(cuCtxSynchronize());
  EXPECT_TRUE(e.check());
  use_device(0);
}

TEST_F(Launch, StreamChoosesTheDeviceNotTheCurrentContext) {
  std::string why;
  if (device_count_or_skip_reason(why) < 2) GTEST_SKIP() << why;
  const int n = 4099;
  Stream s0(0), s1(1);
  DeviceRun on1(1, rng(), n), on0(0, rng(), n);
  use_device(0);
  on1.launch(s1.get());  // device 0 current, device 1's stream and memory
  use_device(1);
  on0.launch(s0.get());  // and the other way round
  s0.sync();
  s1.sync();
  use_device(0);
  EXPECT_TRUE(on1.check());
  EXPECT_TRUE(on0.check());
}

// ---------------------------------------------------------------------------------------------
// 12. Grid edge cases.

constexpr int kGridBlock = 128;

TEST_F(Launch, EmptyGridLaunchesNothing) {
  DeviceBuffer<std::int32_t> out(12 * kGridBlock + kGuard);
  out.poison();
  Stream s;
  auto& fn = JitFunction::get(kGpuKernels, "grid_kernel");
  for (const Grid g : {Grid{0, 1, 1}, Grid{4, 0, 1}, Grid{4, 2, 0}, Grid{0, 0, 0}}) {
    fn({.grid = g, .stream = s.get()}, out.get(), kGridBlock);
  }
  // A grid computed as zero: add_kernel over zero elements.
  auto& add = JitFunction::get(kGpuKernels, "add_kernel");
  DeviceBuffer<float> fx(16);
  fx.poison();
  add({.grid_fn = blocks_over_n, .stream = s.get()}, fx.get(), fx.get(), fx.get(), 0, 1024, false);
  s.sync();
  EXPECT_TRUE(elements_match(
      out.download(), 0, [](std::size_t) { return 0; }, "grid_kernel after empty grids"));
  EXPECT_TRUE(elements_match(
      fx.download(), 0, [](std::size_t) { return 0.0f; }, "add_kernel with n = 0"));

  // The same kernel with a real grid writes exactly its programs' blocks, every axis counted.
  fn({.grid = {3, 2, 2}, .stream = s.get()}, out.get(), kGridBlock);
  s.sync();
  EXPECT_TRUE(elements_match(
      out.download(), 12 * kGridBlock, [](std::size_t i) { return static_cast<std::int32_t>(i / kGridBlock); },
      "grid_kernel on a (3, 2, 2) grid"));
}

TEST_F(Launch, GridBeyondDeviceLimitsThrowsArgumentError) {
  DeviceBuffer<std::int32_t> out(2 * kGridBlock + kGuard);
  out.poison();
  Stream s;
  auto& fn = JitFunction::get(kGpuKernels, "grid_kernel");
  const std::int64_t too_wide = std::int64_t{1} << 31;  // the x limit is 2^31 - 1
  for (const Grid g : {Grid{1, 70000, 1}, Grid{1, 1, 70000}, Grid{too_wide, 1, 1}, Grid{-1, 1, 1}}) {
    const std::string grid = "(" + std::to_string(g.x) + ", " + std::to_string(g.y) + ", " + std::to_string(g.z) + ")";
    SCOPED_TRACE("grid " + grid);
    try {
      fn({.grid = g, .stream = s.get()}, out.get(), kGridBlock);
      ADD_FAILURE() << "a launch with grid " << grid << " did not throw";
    } catch (const ArgumentError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("grid_kernel"), std::string::npos) << message;
      EXPECT_NE(message.find("grid"), std::string::npos) << message;
      if (g.x > 0) {
        const std::string big = std::to_string(std::max({g.x, g.y, g.z}));
        EXPECT_NE(message.find(big), std::string::npos) << "the message should name the dimension given: " << message;
      }
    } catch (const std::exception& e) {
      ADD_FAILURE() << "expected tritonrt::ArgumentError, got: " << e.what();
    }
  }
  // Nothing was launched, and the stream still works.
  s.sync();
  EXPECT_TRUE(elements_match(
      out.download(), 0, [](std::size_t) { return 0; }, "after rejected grids"));
  fn({.grid = {2}, .stream = s.get()}, out.get(), kGridBlock);
  s.sync();
  EXPECT_TRUE(elements_match(
      out.download(), 2 * kGridBlock, [](std::size_t i) { return static_cast<std::int32_t>(i / kGridBlock); },
      "grid_kernel after the rejected launches"));
}

}  // namespace
}  // namespace tritonrt::test

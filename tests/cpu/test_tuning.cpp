// Autotuning without a GPU: Triton-compiled kernels tuned against the stand-in driver, whose
// clock makes each config's time predictable (a fixed time per launch plus a cost per
// program). Checks the choice, that a tuned key is a lookup, that concurrent first calls tune
// once, that a tuning's configs compile at once, reset_to_zero, and that C++ and Triton's own
// Autotuner share persisted results.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <barrier>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fake_cuda.h"
#include "reference.h"
#include "test_driver.h"

namespace tritonrt::test {
namespace {

const std::string kLibrary = kKernels + "/library_style.py";

// Persisted tuning results must start empty: a cache folder of this run's own, set before
// the embedded interpreter reads its environment.
class FreshTritonCache : public ::testing::Environment {
 public:
  void SetUp() override {
    char pattern[] = "/tmp/tritonrt-tuning-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    setenv("TRITON_CACHE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

 private:
  std::string dir_;
};
[[maybe_unused]] ::testing::Environment* const kFreshCache = ::testing::AddGlobalTestEnvironment(new FreshTritonCache);

class Tuning : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      (void)Target::current();
    } catch (const DriverError& e) {
      GTEST_SKIP() << "no CUDA driver could be loaded; put the fake's directory on LD_LIBRARY_PATH: " << e.what();
    }
    if (!fake_cuda_api(&fake_)) GTEST_SKIP() << "the libcuda.so.1 loaded is a real driver, not tritonrt's fake";
    auto& d = TestDriver::get();
    CUdevice device = 0;
    CUcontext ctx = nullptr;
    ASSERT_EQ(d.cuDeviceGet(&device, 0), CUDA_SUCCESS);
    ASSERT_EQ(d.cuDevicePrimaryCtxRetain(&ctx, device), CUDA_SUCCESS);
    ASSERT_EQ(d.cuCtxSetCurrent(ctx), CUDA_SUCCESS);
    ASSERT_EQ(d.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    fake_.reset();
    // 20 ms a launch keeps do_bench to a few runs per config: its counts follow from 25 ms of
    // warm-up and 100 ms of timed runs.
    fake_.set_kernel_duration_us(nullptr, 20000);
    fake_.set_program_cost_us(1);
  }
  void TearDown() override {
    if (stream_ != nullptr) (void)TestDriver::get().cuStreamDestroy(stream_);
    for (const auto b : buffers_) (void)TestDriver::get().cuMemFree(b);
    if (fake_.reset != nullptr) fake_.reset();
  }

  DevicePtr buffer(std::size_t bytes) {
    CUdeviceptr p = 0;
    EXPECT_EQ(TestDriver::get().cuMemAlloc(&p, bytes), CUDA_SUCCESS);
    buffers_.push_back(p);
    return DevicePtr{reinterpret_cast<const void*>(p), DType::fp32, bytes};
  }
  std::uint64_t launches() const {
    FakeCudaStats s;
    fake_.get_stats(&s);
    return s.launches;
  }
  FakeCudaLaunch last_launch() const {
    FakeCudaLaunch launch{};
    EXPECT_EQ(fake_.last_launches(&launch, 1), 1u);
    return launch;
  }
  LaunchConfig config() const {
    return {.grid_fn = [](const BoundArgs& a) { return Grid{cdiv(a.integer("n"), a.integer("BLOCK"))}; },
            .stream = stream_};
  }

  FakeCudaApi fake_{};
  CUstream stream_ = nullptr;
  std::vector<CUdeviceptr> buffers_;
};

TEST_F(Tuning, PicksTheFastestConfigThenLooksItUp) {
  auto& fn = JitFunction::get(kLibrary, "entry_autotuned_add");
  const int n = 1 << 20;
  const DevicePtr x = buffer(4 * n), y = buffer(4 * n), out = buffer(4 * n);
  fn(config(), x, y, out, n);
  // BLOCK 2048 launches the fewest programs: the fastest here. Its kernel runs last.
  const FakeCudaLaunch chosen = last_launch();
  EXPECT_EQ(chosen.block[0], 8u * 32);  // its num_warps
  EXPECT_EQ(chosen.grid[0], static_cast<unsigned>(cdiv(n, 2048)));
  EXPECT_GT(launches(), 3u * 5);  // every config benchmarked
  FakeCudaStats before;
  fake_.get_stats(&before);
  fn(config(), x, y, out, n);
  FakeCudaStats after;
  fake_.get_stats(&after);
  EXPECT_EQ(after.launches, before.launches + 1);  // a lookup: no tuning, no load
  EXPECT_EQ(after.module_loads, before.module_loads);
  EXPECT_EQ(last_launch().grid[0], chosen.grid[0]);
}

TEST_F(Tuning, ConcurrentFirstCallsTuneOnce) {
  fake_.set_program_cost_us(0);  // every config alike: tuning one key takes a fixed number of runs
  auto& fn = JitFunction::get(kLibrary, "entry_autotuned_add");
  const int alone = 1 << 16, together = 1 << 17;
  const DevicePtr x = buffer(4 * together), y = buffer(4 * together), out = buffer(4 * together);
  const std::uint64_t start = launches();
  fn(config(), x, y, out, alone);
  const std::uint64_t tuning = launches() - start - 1;
  constexpr int kThreads = 16;
  std::barrier ready(kThreads);
  std::vector<std::thread> threads;
  const std::uint64_t before = launches();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      ready.arrive_and_wait();
      try {
        fn(config(), x, y, out, together);
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(launches() - before, tuning + kThreads);
}

// A tuning compiles its configs at once, on TRITONRT_COMPILE_THREADS threads (1: one after
// another, as Triton does), skips the one that does not compile and picks the same config.
TEST_F(Tuning, ConfigsCompileAtOnceOnTheThreadsAsked) {
  struct Span {
    double start, end;  // ms on the steady clock
  };
  std::mutex mutex;
  std::vector<Span> compiles;
  const LogLevel level = log_level();
  set_log_level(LogLevel::info);
  set_log_handler([&](LogLevel, std::string_view message) {
    const auto took = message.find(": took ");  // a failed compile says "failed after"
    if (message.find("compiling for cuda:") == std::string_view::npos || took == std::string_view::npos) return;
    const double ms = std::stod(std::string(message.substr(took + 7)));
    const double now =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
    std::lock_guard lock(mutex);
    compiles.push_back({now - ms, now});
  });
  // Durations are logged to 0.1 ms: spans that overlap by less are taken as one after another.
  const auto overlapping = [&] {
    std::sort(compiles.begin(), compiles.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
    for (std::size_t i = 1; i < compiles.size(); ++i) {
      if (compiles[i].start < compiles[i - 1].end - 0.1) return true;
    }
    return false;
  };
  const auto spans = [&] {
    std::string text;
    for (const Span& s : compiles) text += " [" + std::to_string(s.start) + ", " + std::to_string(s.end) + "]";
    return text;
  };
  auto& fn = JitFunction::get(kKernels + "/decorator_cases.py", "many_configs_scale");
  const int n = 1 << 16;
  const DevicePtr x = buffer(4 * n);

  setenv("TRITONRT_COMPILE_THREADS", "1", 1);
  fn(config(), x, n);
  EXPECT_EQ(last_launch().grid[0], static_cast<unsigned>(cdiv(n, 1024)));  // the fewest programs
  EXPECT_EQ(compiles.size(), 3u);
  EXPECT_FALSE(overlapping()) << "one thread compiled configs at the same time:" << spans();

  compiles.clear();
  setenv("TRITONRT_COMPILE_THREADS", "4", 1);
  fn(config(), x, n - 1);  // not a multiple of 16: every config compiles again
  EXPECT_EQ(last_launch().grid[0], static_cast<unsigned>(cdiv(n - 1, 1024)));
  EXPECT_EQ(compiles.size(), 3u);
  EXPECT_TRUE(overlapping()) << "no two configs compiled at the same time on 4 threads:" << spans();

  setenv("TRITONRT_COMPILE_THREADS", "none", 1);
  try {
    fn(config(), x, n - 2);
    ADD_FAILURE() << "TRITONRT_COMPILE_THREADS=none was accepted";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("TRITONRT_COMPILE_THREADS must be a whole number from 1 to 1024, got 'none'"),
              std::string::npos)
        << e.what();
  }
  unsetenv("TRITONRT_COMPILE_THREADS");
  set_log_handler({});
  set_log_level(level);
}

// A grid function that throws for one config while the configs are made ready (n = 1, a
// specialization no earlier test compiled): the call fails with its error, as it would
// launching that config, and the next call tunes.
TEST_F(Tuning, AGridThatThrowsWhileTuningFailsTheCallWithItsError) {
  auto& fn = JitFunction::get(kKernels + "/decorator_cases.py", "many_configs_scale");
  const DevicePtr x = buffer(4);
  LaunchConfig throwing = config();
  throwing.grid_fn = [](const BoundArgs& a) {
    if (a.integer("BLOCK") == 512) throw std::runtime_error("no grid for BLOCK 512");
    return Grid{cdiv(a.integer("n"), a.integer("BLOCK"))};
  };
  try {
    fn(throwing, x, 1);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "no grid for BLOCK 512");
  }
  fn(config(), x, 1);
  EXPECT_EQ(last_launch().grid[0], 1u);
}

TEST_F(Tuning, ResetToZeroZeroesTheArgumentItNames) {
  auto& fn = JitFunction::get(kLibrary, "atomic_sum");
  const int n = 1 << 20;
  const DevicePtr x = buffer(4 * n), out = buffer(4);
  ASSERT_EQ(TestDriver::get().cuMemsetD8(reinterpret_cast<CUdeviceptr>(out.address), 0xFF, 4), CUDA_SUCCESS);
  fn(config(), x, out, n);
  // The stand-in runs no kernel: what is left in out is the tuner's zeroing, done last.
  float result = -1;
  ASSERT_EQ(TestDriver::get().cuMemcpyDtoH(&result, reinterpret_cast<CUdeviceptr>(out.address), 4), CUDA_SUCCESS);
  EXPECT_EQ(result, 0.0f);
  // An address whose size is unknown cannot be zeroed: a clear error, before any launch.
  const DevicePtr unsized{out.address, DType::fp32};
  try {
    fn(config(), x, unsized, n / 2);
    FAIL() << "no error";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("parameter 'out_ptr' (#1): is in the autotuner's reset_to_zero"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(Tuning, NoConfigRunningIsACompileErrorSayingWhyForEach) {
  auto& fn = JitFunction::get(kKernels + "/decorator_cases.py", "no_config_compiles");
  const DevicePtr x = buffer(64);
  try {
    fn(config(), x, 16);
    FAIL() << "no error";
  } catch (const CompileError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("none of its 2 autotune configs ran for key (16, 'fp32')"), std::string::npos) << message;
    EXPECT_NE(message.find("{BLOCK: 3, num_warps: 4"), std::string::npos) << message;
    EXPECT_NE(message.find("{BLOCK: 5, num_warps: 4"), std::string::npos) << message;
    EXPECT_NE(message.find("power of 2"), std::string::npos) << message;
    // The two configs failed for the same reason: said once, after both, with Triton's text
    // indented beneath as one block so its caret still lines up.
    EXPECT_NE(message.find("}, {BLOCK: 5, num_warps: 4"), std::string::npos) << message;
    const std::string source = "\n        offs = tl.arange(0, BLOCK)\n";
    const auto at = message.find(source);
    ASSERT_NE(at, std::string::npos) << message;
    EXPECT_EQ(message.find(source, at + 1), std::string::npos) << message;
    const auto caret = message.find('\n', at + 1) + 1;
    EXPECT_EQ(message.substr(caret, message.find('\n', caret) - caret), std::string(4 + 11, ' ') + "^") << message;
    ASSERT_NE(message.find("compiling for cuda:90"), std::string::npos) << message;
    EXPECT_EQ(message.find("compiling for cuda:90"), message.rfind("compiling for cuda:90")) << message;
  }
}

TEST_F(Tuning, ResultsAreSharedWithTritonsOwnAutotuner) {
  auto& fn = JitFunction::get(kLibrary, "entry_autotuned_add");
  const int n = 3 << 18;
  const DevicePtr x = buffer(4 * n), y = buffer(4 * n), out = buffer(4 * n);
  const auto address = [](const DevicePtr& p) { return std::to_string(reinterpret_cast<std::uintptr_t>(p.address)); };
  const std::string args = "[P(" + address(x) + ", 'float32'), P(" + address(y) + ", 'float32'), P(" + address(out) +
                           ", 'float32'), " + std::to_string(n) + "]";
  const auto configs = fn.compile_configs(Target::parse("cuda:90"), {}, x, y, out, n);
  ASSERT_EQ(configs.size(), 3u);

  // C++ tunes and persists: Triton's Autotuner finds the result and benchmarks nothing, though
  // it is told config 0 would be fastest, and compiles the config C++ chose (BLOCK 2048).
  fn(config(), x, y, out, n);
  const DecoratedRun python = triton_decorated_run(kLibrary, "entry_autotuned_add", args, 0);
  EXPECT_TRUE(python.benchmarked.empty()) << python.benchmarked.size() << " configs benchmarked";
  EXPECT_EQ(python.hash, configs[2].artifact->metadata.hash);

  // Triton tunes another key and persists: C++ reads its choice (config 0) and tunes nothing.
  const int m = 5 << 17;
  const std::string other = args.substr(0, args.rfind(", ") + 2) + std::to_string(m) + "]";
  const DecoratedRun tuned = triton_decorated_run(kLibrary, "entry_autotuned_add", other, 0);
  ASSERT_EQ(tuned.benchmarked.size(), 3u);
  const std::uint64_t before = launches();
  fn(config(), x, y, out, m);
  EXPECT_EQ(launches(), before + 1);
  EXPECT_EQ(last_launch().block[0], 4u * 32);
  EXPECT_EQ(last_launch().grid[0], static_cast<unsigned>(cdiv(m, 256)));
}

// LaunchConfig::autotune_config: the caller's config runs as given, untimed, and compiles to
// the kernel that config compiles to; the tuner's own choice is untouched.
TEST_F(Tuning, AChosenConfigRunsUntimed) {
  auto& fn = JitFunction::get(kLibrary, "entry_autotuned_add");
  const int n = 7 << 16;
  const DevicePtr x = buffer(4 * n), y = buffer(4 * n), out = buffer(4 * n);
  LaunchConfig chosen = config();
  chosen.autotune_config = 1;  // BLOCK 1024, num_warps 4, num_stages 2
  const std::uint64_t before = launches();
  fn(chosen, x, y, out, n);
  EXPECT_EQ(launches(), before + 1) << "a chosen config is not tuned";
  EXPECT_EQ(last_launch().block[0], 4u * 32);
  EXPECT_EQ(last_launch().grid[0], static_cast<unsigned>(cdiv(n, 1024)));
  const auto configs = fn.compile_configs(Target::current(), {}, x, y, out, n);
  ASSERT_EQ(configs.size(), 3u);
  EXPECT_EQ(fn.artifact_for(chosen, x, y, out, n)->metadata.hash, configs[1].artifact->metadata.hash);
  // Without a choice the same key is tuned (and BLOCK 2048, the fewest programs, wins).
  fn(config(), x, y, out, n);
  EXPECT_GT(launches(), before + 2);
  EXPECT_EQ(last_launch().grid[0], static_cast<unsigned>(cdiv(n, 2048)));

  chosen.autotune_config = 3;
  try {
    fn(chosen, x, y, out, n);
    ADD_FAILURE() << "config 3 of 3 was accepted";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("autotune_config is 3, but its autotuner has 3 configs"), std::string::npos)
        << e.what();
  }
  auto& plain = JitFunction::get(kKernels + "/signatures.py", "plain");
  chosen.autotune_config = 0;
  try {
    plain(chosen, x, y, 1000, 7, 0.5, true, std::nullopt, 64, 0);
    ADD_FAILURE() << "a plain kernel took autotune_config";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("the kernel is not autotuned"), std::string::npos) << e.what();
  }
}

// A launch whose every decorator answered from memory is remembered whole, and a later call is
// resolved from it only where it reads what that call read: another key, or pointers of
// another dtype (Triton's key holds their dtypes), tunes; each key keeps its own choice.
TEST_F(Tuning, ARememberedCallServesOnlyCallsOfItsKey) {
  auto& fn = JitFunction::get(kLibrary, "entry_autotuned_add");
  const int n1 = 3 << 16, n2 = 5 << 16;
  const DevicePtr x = buffer(4 * n2), y = buffer(4 * n2), out = buffer(4 * n2);
  auto tunes = [&](const DevicePtr& a, const DevicePtr& b, const DevicePtr& c, int n) {
    const std::uint64_t before = launches();
    fn(config(), a, b, c, n);
    return launches() > before + 1;
  };
  EXPECT_TRUE(tunes(x, y, out, n1));
  EXPECT_FALSE(tunes(x, y, out, n1));
  EXPECT_FALSE(tunes(x, y, out, n1));
  EXPECT_TRUE(tunes(x, y, out, n2)) << "the call remembered for n1 served n2";
  EXPECT_EQ(last_launch().grid[0], static_cast<unsigned>(cdiv(n2, 2048)));
  EXPECT_FALSE(tunes(x, y, out, n1));
  EXPECT_EQ(last_launch().grid[0], static_cast<unsigned>(cdiv(n1, 2048)));
  const DevicePtr hx{x.address, DType::fp16, x.bytes}, hy{y.address, DType::fp16, y.bytes},
      hout{out.address, DType::fp16, out.bytes};
  EXPECT_TRUE(tunes(hx, hy, hout, n1)) << "the call remembered for fp32 pointers served fp16 ones";
  EXPECT_FALSE(tunes(hx, hy, hout, n1));
  EXPECT_FALSE(tunes(x, y, out, n1));
}

// The same for heuristics, past the number of calls a context remembers whole: stacked
// heuristics read n (BLOCK from n, then NEEDS_MASK from n and BLOCK), and each n, first seen or
// seen again, launches the kernel of its own BLOCK and mask, with the grid of its own BLOCK.
TEST_F(Tuning, ACallResolvedFromARememberedOneTakesTheValuesOfWhatItReads) {
  auto& fn = JitFunction::get(kLibrary, "stacked_heuristics_sum");
  const DevicePtr x = buffer(4 * 1024 * 17), out = buffer(4);
  // BLOCK min(next_power_of_2(n), 1024): 1024, 512 or 256 here; masked where BLOCK does not divide n.
  std::vector<int> sizes = {256, 255, 200, 512, 511, 300, 130, 129};
  for (int k = 1; k <= 16; ++k) {
    sizes.push_back(1024 * k);
    sizes.push_back(1024 * k + 1);
  }
  auto block_of = [](int n) { return n > 512 ? 1024 : n > 256 ? 512 : 256; };
  std::map<std::pair<int, bool>, const void*> kernels;  // by (BLOCK, masked), as first launched
  for (int pass = 0; pass < 3; ++pass) {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const int n = sizes[pass == 1 ? sizes.size() - 1 - i : i];
      const int block = block_of(n);
      fn(config(), x, out, n);
      const FakeCudaLaunch launch = last_launch();
      const void*& kernel = kernels[{block, n % block != 0}];
      if (kernel == nullptr) kernel = launch.function;
      EXPECT_EQ(launch.function, kernel) << "n " << n << ", pass " << pass;
      EXPECT_EQ(launch.grid[0], static_cast<unsigned>(cdiv(n, block))) << "n " << n << ", pass " << pass;
    }
  }
  std::set<const void*> distinct;
  for (const auto& [form, kernel] : kernels) distinct.insert(kernel);
  EXPECT_EQ(distinct.size(), 6u) << "two (BLOCK, mask) forms launched one kernel";
}

// When pruning keeps one config, Triton before 3.8 still times it (running the kernel a few
// times, with its resets and restores); from 3.8 it takes it untimed. tritonrt does what the
// installed Triton does.
TEST_F(Tuning, ALoneConfigLeftByPruningIsTimedOnlyWhereTritonTimesIt) {
  auto& fn = JitFunction::get(kLibrary, "pruned_axpy");
  const int n = 100;  // keeps BLOCK 128 alone
  const DevicePtr x = buffer(4 * n), y = buffer(4 * n);
  const auto address = [](const DevicePtr& p) { return std::to_string(reinterpret_cast<std::uintptr_t>(p.address)); };
  const std::string args =
      "[P(" + address(x) + ", 'float32'), P(" + address(y) + ", 'float32'), " + std::to_string(n) + ", 2.0]";
  const DecoratedRun python = triton_decorated_run(kLibrary, "pruned_axpy", args);
  ASSERT_EQ(python.kept.size(), 1u);
  const std::uint64_t before = launches();
  fn(config(), x, y, n, 2.0f);
  const std::uint64_t runs = launches() - before;
  if (python.benchmarked.empty()) {
    EXPECT_EQ(runs, 1u) << "the installed Triton does not time a lone config; tritonrt did";
  } else {
    EXPECT_GT(runs, 1u) << "the installed Triton times a lone config; tritonrt did not";
  }
  EXPECT_EQ(last_launch().grid[0], 1u);  // BLOCK 128 covers n
}

}  // namespace
}  // namespace tritonrt::test

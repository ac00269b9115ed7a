// A deployed program on a real GPU: this binary links no libpython and cannot load one
// (no_python.h), and launches kernels that another process compiled and tuned (on Hopper and
// newer also Triton's persistent-matmul tutorial, whose configs' pre_hooks set its
// descriptors' tiles), from tritonrt's index and from a bundle whose kernels' .py files it
// never sees; results are checked against the host. The other process is this binary run
// again with Python allowed.

#include <algorithm>

#include "gpu_test.h"
#include "host_float.h"
#include "no_python.h"
#include "tritonrt/bundle.h"

namespace tritonrt::test {
namespace {

const fs::path kDeployed = "/nonexistent/app/kernels";  // where the deployed program "has" its kernels
constexpr long long kAddN = 100003;
constexpr long long kTunedN = 1 << 20;

// gpu_kernels.py's add_kernel, got as `source`: out = x + y, checked on the host.
void launch_add(const std::string& source) {
  std::vector<float> x(kAddN), y(kAddN);
  for (long long i = 0; i < kAddN; ++i) {
    x[i] = static_cast<float>(i % 977) * 0.5f;
    y[i] = static_cast<float>(i % 13) - 6.0f;
  }
  DeviceBuffer<float> dx(x), dy(y), out(kAddN);
  out.poison();
  LaunchConfig config;
  config.grid = Grid{static_cast<unsigned>(cdiv(kAddN, 1024)), 1, 1};
  JitFunction::get(source, "add_kernel")(config, dx.get(), dy.get(), out.get(), kAddN, 1024, false);
  const auto got = out.download();
  Mismatches wrong("add_kernel from " + source);
  for (long long i = 0; i < kAddN; ++i) {
    if (got[i] != x[i] + y[i]) wrong.add(i, got[i], x[i] + y[i]);
  }
  EXPECT_TRUE(wrong.result());
}

// library_style.py's autotuned entry_autotuned_add, got as `source`; returns the hash of the
// config it launched.
std::string launch_tuned(const std::string& source) {
  std::vector<float> x(kTunedN), y(kTunedN);
  for (long long i = 0; i < kTunedN; ++i) {
    x[i] = static_cast<float>(i % 1001);
    y[i] = 0.25f;
  }
  DeviceBuffer<float> dx(x), dy(y), out(kTunedN);
  auto& fn = JitFunction::get(source, "entry_autotuned_add");
  LaunchConfig config;
  config.grid_fn = [](const BoundArgs& a) { return Grid{cdiv(a.integer("n"), a.integer("BLOCK"))}; };
  fn(config, dx.get(), dy.get(), out.get(), kTunedN);
  const auto got = out.download();
  Mismatches wrong("entry_autotuned_add from " + source);
  for (long long i = 0; i < kTunedN; ++i) {
    if (got[i] != x[i] + y[i]) wrong.add(i, got[i], x[i] + y[i]);
  }
  EXPECT_TRUE(wrong.result());
  return fn.artifact_for(config, dx.get(), dy.get(), out.get(), kTunedN)->metadata.hash;
}

// Whether the device launches host TMA descriptors (Hopper and newer).
bool has_tma() { return compute_capability(0) >= 90; }

// hopper_kernels.py's matmul_persistent (Triton's persistent-matmul tutorial: descriptors with
// a placeholder block shape, each config's pre_hook setting its tiles), got as `source`: C = A
// B^T checked on the host; returns the hash it launched.
std::string launch_hooked_matmul(const std::string& source) {
  const int M = 256, N = 256, K = 128;
  std::vector<std::uint16_t> a(static_cast<std::size_t>(M) * K), b(static_cast<std::size_t>(N) * K);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = to_fp16(static_cast<double>(i % 7) * 0.125 - 0.375);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = to_fp16(static_cast<double>(i % 5) * 0.25 - 0.5);
  DeviceBuffer<std::uint16_t> da(a), db(b), dc(static_cast<std::size_t>(M) * N);
  const auto matrix = [](const DeviceBuffer<std::uint16_t>& buffer, std::int64_t rows, std::int64_t cols) {
    const std::int64_t shape[] = {rows, cols}, strides[] = {cols, 1}, placeholder[] = {1, 1};
    return TensorDescriptor::make(reinterpret_cast<const void*>(buffer.address()), DType::fp16, shape, strides,
                                  placeholder);
  };
  const std::int64_t sms = multiprocessor_count();
  auto& matmul = JitFunction::get(source, "matmul_persistent");
  LaunchConfig config;
  config.grid_fn = [&](const BoundArgs& args) {
    return Grid{std::min(sms, cdiv(M, args.integer("BLOCK_M")) * cdiv(N, args.integer("BLOCK_N")))};
  };
  const auto da_desc = matrix(da, M, K), db_desc = matrix(db, N, K), dc_desc = matrix(dc, M, N);
  matmul(config, da_desc, db_desc, dc_desc, M, N, K, sms);
  EXPECT_TRUE(matches_product(
      "matmul_persistent from " + source, dc.download(), M, N, K, [&](int i, int k) { return from_fp16(a[i * K + k]); },
      [&](int k, int j) { return from_fp16(b[j * K + k]); }, [](std::uint16_t v) { return from_fp16(v); }));
  return matmul.artifact_for(config, da_desc, db_desc, dc_desc, M, N, K, sms)->metadata.hash;
}

// Run by Deploy's set-up in a process that may load Python: compiles the kernels and tunes the
// autotuned ones (into the scratch index; the hooked matmul's hooks run here), then bundles them.
TEST(DeployChild, CompilesTunesAndBundlesWithPython) {
  if (std::getenv("TRITONRT_DEPLOY_PREPARE") == nullptr) GTEST_SKIP() << "run by the Deploy tests";
  use_device(0);
  launch_add((scratch->dir / "gpu_kernels.py").string());
  std::printf("tuned config %s\n", launch_tuned((scratch->dir / "library_style.py").string()).c_str());
  BundleFilter filter;
  filter.kernels = {(scratch->dir / "gpu_kernels.py").string() + ":add_kernel",
                    (scratch->dir / "library_style.py").string() + ":entry_autotuned_add"};
  if (has_tma()) {
    std::printf("hooked matmul %s\n", launch_hooked_matmul((scratch->dir / "hopper_kernels.py").string()).c_str());
    filter.kernels.push_back((scratch->dir / "hopper_kernels.py").string() + ":matmul_persistent");
  }
  const BundleInfo info = create_bundle(scratch->dir / "deploy.trb", filter);
  EXPECT_EQ(info.kernels.size(), has_tma() ? 3u : 2u);
}

// Run by Deploy.ABundleServes... with TRITONRT_BUNDLE set, an empty index and the log on.
TEST(DeployChild, LaunchesFromTheBundle) {
  if (std::getenv("TRITONRT_BUNDLE") == nullptr) GTEST_SKIP() << "run by Deploy.ABundleServesAProgramWithoutPython";
  use_device(0);
  launch_add((kDeployed / "gpu_kernels.py").string());
  std::printf("tuned config %s\n", launch_tuned((kDeployed / "library_style.py").string()).c_str());
  if (has_tma()) {
    std::printf("hooked matmul %s\n", launch_hooked_matmul((kDeployed / "hopper_kernels.py").string()).c_str());
  }
  EXPECT_FALSE(python_is_mapped());
}

// The hash a process printed after `label` ("tuned config", "hooked matmul"), from its output.
std::string printed_hash(const std::string& out, const std::string& label = "tuned config") {
  const auto at = out.find(label + " ");
  if (at == std::string::npos) return "";
  const auto start = at + label.size() + 1;
  return out.substr(start, out.find('\n', at) - start);
}

class Deploy : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    static const std::pair<int, std::string> prepared =
        run_child("DeployChild.CompilesTunesAndBundlesWithPython", "TRITONRT_DEPLOY_PREPARE=1", true);
    ASSERT_EQ(prepared.first, 0) << prepared.second;
    tuned = printed_hash(prepared.second);
    ASSERT_FALSE(tuned.empty()) << prepared.second;
    hooked = printed_hash(prepared.second, "hooked matmul");
    ASSERT_EQ(hooked.empty(), !has_tma()) << prepared.second;
  }
  std::string tuned, hooked;  // the hooked matmul's: on Hopper and newer only
};

TEST_F(Deploy, TheIndexServesAProgramWithoutPython) {
  launch_add((scratch->dir / "gpu_kernels.py").string());
  EXPECT_EQ(launch_tuned((scratch->dir / "library_style.py").string()), tuned);  // the choice, not a new tuning
  // Its choice and its hooks' tiles from the index: no Python runs them.
  if (has_tma()) {
    EXPECT_EQ(launch_hooked_matmul((scratch->dir / "hopper_kernels.py").string()), hooked);
  }
  EXPECT_FALSE(python_is_mapped());
}

TEST_F(Deploy, ABundleServesAProgramWithoutPython) {
  const auto [status, out] =
      run_child("DeployChild.LaunchesFromTheBundle",
                "TRITONRT_CACHE_DIR='" + (scratch->dir / "empty-index").string() + "' TRITONRT_BUNDLE='" +
                    (scratch->dir / "deploy.trb").string() + "' TRITONRT_LOG=info");
  ASSERT_EQ(status, 0) << out;
  EXPECT_EQ(printed_hash(out), tuned) << out;
  EXPECT_EQ(printed_hash(out, "hooked matmul"), hooked) << out;
  // The tuning key's choice came from the bundle: nothing was timed.
  EXPECT_NE(out.find("read from the bundle " + fs::weakly_canonical(scratch->dir / "deploy.trb").string()),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace tritonrt::test

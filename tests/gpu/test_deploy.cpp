// A deployed program on a real GPU: this binary links no libpython and cannot load one
// (no_python.h), and launches kernels that another process compiled and tuned, from
// tritonrt's index and from a bundle whose kernels' .py files it never sees; results are
// checked against the host. The other process is this binary run again with Python allowed.

#include "gpu_test.h"
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

// Run by Deploy's set-up in a process that may load Python: compiles both kernels and tunes
// the autotuned one (into the scratch index), then bundles them.
TEST(DeployChild, CompilesTunesAndBundlesWithPython) {
  if (std::getenv("TRITONRT_DEPLOY_PREPARE") == nullptr) GTEST_SKIP() << "run by the Deploy tests";
  use_device(0);
  launch_add((scratch->dir / "gpu_kernels.py").string());
  std::printf("tuned config %s\n", launch_tuned((scratch->dir / "library_style.py").string()).c_str());
  BundleFilter filter;
  filter.kernels = {(scratch->dir / "gpu_kernels.py").string() + ":add_kernel",
                    (scratch->dir / "library_style.py").string() + ":entry_autotuned_add"};
  const BundleInfo info = create_bundle(scratch->dir / "deploy.trb", filter);
  EXPECT_EQ(info.kernels.size(), 2u);
}

// Run by Deploy.ABundleServes... with TRITONRT_BUNDLE set, an empty index and the log on.
TEST(DeployChild, LaunchesFromTheBundle) {
  if (std::getenv("TRITONRT_BUNDLE") == nullptr) GTEST_SKIP() << "run by Deploy.ABundleServesAProgramWithoutPython";
  use_device(0);
  launch_add((kDeployed / "gpu_kernels.py").string());
  std::printf("tuned config %s\n", launch_tuned((kDeployed / "library_style.py").string()).c_str());
  EXPECT_FALSE(python_is_mapped());
}

// The hash of the config the preparing process's tuning chose, from its output.
std::string tuned_hash(const std::string& out) {
  const auto at = out.find("tuned config ");
  if (at == std::string::npos) return "";
  return out.substr(at + 13, out.find('\n', at) - at - 13);
}

class Deploy : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    static const std::pair<int, std::string> prepared =
        run_child("DeployChild.CompilesTunesAndBundlesWithPython", "TRITONRT_DEPLOY_PREPARE=1", true);
    ASSERT_EQ(prepared.first, 0) << prepared.second;
    tuned = tuned_hash(prepared.second);
    ASSERT_FALSE(tuned.empty()) << prepared.second;
  }
  std::string tuned;
};

TEST_F(Deploy, TheIndexServesAProgramWithoutPython) {
  launch_add((scratch->dir / "gpu_kernels.py").string());
  EXPECT_EQ(launch_tuned((scratch->dir / "library_style.py").string()), tuned);  // the choice, not a new tuning
  EXPECT_FALSE(python_is_mapped());
}

TEST_F(Deploy, ABundleServesAProgramWithoutPython) {
  const auto [status, out] =
      run_child("DeployChild.LaunchesFromTheBundle",
                "TRITONRT_CACHE_DIR='" + (scratch->dir / "empty-index").string() + "' TRITONRT_BUNDLE='" +
                    (scratch->dir / "deploy.trb").string() + "' TRITONRT_LOG=info");
  ASSERT_EQ(status, 0) << out;
  EXPECT_EQ(tuned_hash(out), tuned) << out;
  // The tuning key's choice came from the bundle: nothing was timed.
  EXPECT_NE(out.find("read from the bundle " + fs::weakly_canonical(scratch->dir / "deploy.trb").string()),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace tritonrt::test

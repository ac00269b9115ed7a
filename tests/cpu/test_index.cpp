// tritonrt's index from a process that cannot load Python (no_python.h): every call the
// index cannot serve fails.

#include "common/sha256.h"
#include "stand_in_driver.h"

namespace tritonrt::test {
namespace {

TEST(Index, AProcessWithoutPythonRunsWhatAnotherProcessCompiled) {
  const std::string source = (scratch->dir / "signatures.py").string();
  const std::string hash = compile_elsewhere(source + ":plain", kPlainSignature);
  auto& fn = JitFunction::get(source, "plain");
  const auto artifact =
      fn.compile(Target::parse("cuda:90"), {}, fptr(16), fptr(20), 4096, 1, 0.5, true, std::nullopt, 64, "fast");
  EXPECT_EQ(artifact->metadata.hash, hash);
  EXPECT_EQ(artifact->binary.substr(0, 4), std::string("\x7f"
                                                       "ELF"));
  EXPECT_EQ(fs::path(artifact->cache_dir).parent_path().parent_path(), scratch->dir / "index");
  EXPECT_FALSE(python_is_mapped());
}

TEST(Index, ACallItDoesNotHoldNamesTheKernelAndSpecialization) {
  const std::string source = (scratch->dir / "signatures.py").string();
  compile_elsewhere(source + ":plain", kPlainSignature);
  auto& fn = JitFunction::get(source, "plain");
  try {
    fn.compile(Target::parse("cuda:90"), {}, fptr(16), fptr(20), 4096, 1, 0.5, true, std::nullopt, 32, "fast");
    FAIL() << "a specialization nobody compiled was served";
  } catch (const PythonError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("kernel 'plain'"), std::string::npos) << what;
    EXPECT_NE(what.find("/nonexistent/libpython-for-this-test.so"), std::string::npos) << what;
  }
  EXPECT_FALSE(python_is_mapped());
}

TEST(Index, AnEditedHelperMakesTheKernelStaleAndTheErrorNamesIt) {
  const fs::path source = scratch->dir / "pkg" / "scale.py";
  compile_elsewhere(source.string() + ":double_kernel", "*fp32,4096,256");
  const fs::path helpers = scratch->dir / "pkg" / "helpers.py";
  const std::string before = read(helpers);
  write(helpers, before + "\n# edited\n");
  try {
    JitFunction::get(source.string(), "double_kernel");
    FAIL() << "a kernel whose helper changed was served from the index";
  } catch (const PythonError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'" + helpers.string() + "' changed since it was compiled"), std::string::npos) << what;
    EXPECT_NE(what.find("Python is unavailable"), std::string::npos) << what;
  }
  write(helpers, before);  // back as it was: fresh again
  auto& fn = JitFunction::get(source.string(), "double_kernel");
  EXPECT_EQ(fn.compile(Target::parse("cuda:90"), {}, fptr(16), 4096, 256)->metadata.name, "double_kernel");
  EXPECT_FALSE(python_is_mapped());
}

// JitFunction::get and the first launch, against the stand-in driver (ctest puts it on
// LD_LIBRARY_PATH): the binary comes from the index, loaded and launched with no Python.
TEST(Index, TheFirstLaunchNeedsNoPython) {
  FakeCudaApi fake{};
  if (const auto why = no_fake_driver(fake)) GTEST_SKIP() << *why;
  ASSERT_EQ(Target::current().str(), "cuda:90");  // what the CLI compiles for below
  const fs::path copy = scratch->dir / "launched.py";
  fs::copy(kKernels / "signatures.py", copy);
  const std::string hash = compile_elsewhere(copy.string() + ":plain", R"(*fp32,*fp32,4096,1,0.5,True,None,64,"fast")");
  alignas(16) static float p_data[4096], q_data[4096];  // stand-in device memory: the fake runs nothing
  float* const p = p_data;
  float* const q = q_data;
  auto& fn = JitFunction::get(copy.string(), "plain");
  LaunchConfig config;
  config.grid = Grid{64, 1, 1};
  fn(config, p, q, 4096, 1, 0.5, true, std::nullopt, 64, "fast");
  FakeCudaStats stats{};
  fake.get_stats(&stats);
  EXPECT_EQ(stats.launches, 1u);
  FakeCudaLaunch launch{};
  ASSERT_EQ(fake.last_launches(&launch, 1), 1u);
  EXPECT_STREQ(launch.name, "plain");
  EXPECT_EQ(fn.artifact_for(config, p, q, 4096, 1, 0.5, true, std::nullopt, 64, "fast")->metadata.hash, hash);
  EXPECT_FALSE(python_is_mapped());
}

// Run by the test below in a process of its own that may load Python: tunes and records.
TEST(IndexChild, TunesWithPython) {
  if (std::getenv("TRITONRT_INDEX_TEST_PARENT") == nullptr) GTEST_SKIP() << "run by Index.ATunedChoiceIsReused...";
  FakeCudaApi fake{};
  if (const auto why = no_fake_driver(fake)) GTEST_SKIP() << *why;
  launch_tuned_add(fake, scratch->dir / "library_style.py");
  FakeCudaStats stats{};
  fake.get_stats(&stats);
  FakeCudaLaunch launch{};
  ASSERT_EQ(fake.last_launches(&launch, 1), 1u);
  std::printf("tuned: %llu launches, grid %u\n", static_cast<unsigned long long>(stats.launches), launch.grid[0]);
}

// Run by the tests below in a process of its own that may load Python: a config's pre_hook
// runs in Python and what it did is recorded.
TEST(IndexChild, RunsConfigHooksWithPython) {
  if (std::getenv("TRITONRT_INDEX_TEST_PARENT") == nullptr) GTEST_SKIP() << "run by Index.ConfigHookEffects...";
  FakeCudaApi fake{};
  if (const auto why = no_fake_driver(fake)) GTEST_SKIP() << *why;
  std::printf("hooks: A's tile %s\n", launch_layout_matmul(fake, scratch->dir / "descriptor_kernels.py", true).c_str());
}

// A config's pre_hook that another process ran for the same inputs (FlagGems' Hopper matmul
// style: tiles from the config and A's layout): its recorded block shapes serve the call with
// no Python; a call that reads another layout needs Python.
TEST(Index, ConfigHookEffectsRecordedElsewhereServeWithoutPython) {
  FakeCudaApi fake{};
  if (const auto why = no_fake_driver(fake)) GTEST_SKIP() << *why;
  ASSERT_EQ(Target::current().str(), "cuda:90");  // tensor maps, whose tiles are checked
  const auto [status, out] = run_child("IndexChild.RunsConfigHooksWithPython", "", true);
  ASSERT_EQ(status, 0) << out;
  ASSERT_NE(out.find("hooks: A's tile 64x32"), std::string::npos) << out;
  EXPECT_EQ(launch_layout_matmul(fake, scratch->dir / "descriptor_kernels.py", true), "64x32");
  try {
    launch_layout_matmul(fake, scratch->dir / "descriptor_kernels.py", false);
    FAIL() << "a hook effect recorded for another layout was served";
  } catch (const PythonError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("kernel 'matmul_tma_layouts': the pre_hook of autotune config {BLOCK_M: 64, BLOCK_N: 64, "
                        "BLOCK_K: 32, num_warps: 4"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("has no effect recorded for these arguments on cuda:90, and Python is unavailable"),
              std::string::npos)
        << what;
  }
  EXPECT_FALSE(python_is_mapped());
}

// Run by the tests below in a process of its own that may load Python: the heuristics run
// in Python and their values are recorded.
TEST(IndexChild, RunsHeuristicsWithPython) {
  if (std::getenv("TRITONRT_INDEX_TEST_PARENT") == nullptr) GTEST_SKIP() << "run by Index.HeuristicValues...";
  FakeCudaApi fake{};
  if (const auto why = no_fake_driver(fake)) GTEST_SKIP() << *why;
  std::printf("heuristics: grid %u\n", launch_heuristic_scale(fake, scratch->dir / "library_style.py", kTunedN));
}

// A heuristics-decorated kernel whose heuristics another process ran for the same inputs and
// device: their recorded values serve it with no Python; other inputs need Python.
TEST(Index, HeuristicValuesRecordedElsewhereServeWithoutPython) {
  FakeCudaApi fake{};
  if (const auto why = no_fake_driver(fake)) GTEST_SKIP() << *why;
  const auto [status, out] = run_child("IndexChild.RunsHeuristicsWithPython", "", true);
  ASSERT_EQ(status, 0) << out;
  ASSERT_NE(out.find("heuristics: grid 256"), std::string::npos) << out;  // BLOCK 256 for 65536 on 132 SMs
  EXPECT_EQ(launch_heuristic_scale(fake, scratch->dir / "library_style.py", kTunedN), 256u);
  try {
    launch_heuristic_scale(fake, scratch->dir / "library_style.py", 1000);
    FAIL() << "a heuristic value nobody recorded was served";
  } catch (const PythonError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("kernel 'entry_heuristic_scale': heuristic 'BLOCK' has no value recorded for these arguments "
                        "on cuda:90, and Python is unavailable"),
              std::string::npos)
        << what;
  }
  EXPECT_FALSE(python_is_mapped());
}

// An autotuned kernel whose choice another process made: launched once, with that choice,
// no tuning runs and no Python.
TEST(Index, ATunedChoiceIsReusedWithoutPythonOrTuning) {
  FakeCudaApi fake{};
  if (const auto why = no_fake_driver(fake)) GTEST_SKIP() << *why;
  const auto [status, out] = run_child("IndexChild.TunesWithPython", "", true);
  ASSERT_EQ(status, 0) << out;
  unsigned long long child_launches = 0;
  unsigned child_grid = 0;
  const auto at = out.find("tuned: ");
  ASSERT_NE(at, std::string::npos) << out;
  ASSERT_EQ(std::sscanf(out.c_str() + at, "tuned: %llu launches, grid %u", &child_launches, &child_grid), 2) << out;
  EXPECT_GT(child_launches, 3u) << "the child did not tune";

  EXPECT_EQ(child_grid, static_cast<unsigned>(cdiv(kTunedN, 2048)));
  launch_tuned_add(fake, scratch->dir / "library_style.py");
  expect_only_the_chosen_config_launched(fake);
  EXPECT_FALSE(python_is_mapped());
}

// A damaged index file is detected by its checksum, set aside and never used: here, with
// no Python to compile again, the call fails with a clear error instead.
TEST(Index, DamagedFilesAreDetectedNeverUsed) {
  const fs::path copy = scratch->dir / "damaged.py";
  fs::copy(kKernels / "signatures.py", copy);
  compile_elsewhere(copy.string() + ":with_defaults", "*fp32,100");
  fs::path kernel_dir;
  for (const auto& entry : fs::recursive_directory_iterator(scratch->dir / "index")) {
    if (entry.path().filename() == "kernel" && read(entry.path()).find("damaged.py") != std::string::npos) {
      kernel_dir = entry.path().parent_path();
    }
  }
  ASSERT_FALSE(kernel_dir.empty());
  fs::path artifact;
  for (const auto& entry : fs::directory_iterator(kernel_dir)) {
    if (entry.path().extension() == ".artifact") artifact = entry.path();
  }
  ASSERT_FALSE(artifact.empty());
  std::string bytes = read(artifact);
  bytes[bytes.size() / 2] ^= 0x40;  // one flipped bit in the binary
  write(artifact, bytes);
  auto& fn = JitFunction::get(copy.string(), "with_defaults");
  EXPECT_THROW(fn.compile(Target::parse("cuda:90"), {}, fptr(16), 100), PythonError);
  EXPECT_FALSE(fs::exists(artifact)) << "the damaged file was not set aside";
  bool set_aside = false;
  for (const auto& entry : fs::directory_iterator(kernel_dir)) {
    set_aside |= entry.path().filename().string().starts_with(artifact.filename().string() + ".invalid-");
  }
  EXPECT_TRUE(set_aside);
  EXPECT_FALSE(python_is_mapped());
}

// The index's checksums and source fingerprints: FIPS 180-4's own examples, and the same
// digest whatever the pieces the bytes arrive in.
TEST(Sha256, GivesTheStandardsDigests) {
  using detail::sha256_hex;
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  std::string bytes;
  for (int i = 0; i < 1000; ++i) bytes += static_cast<char>(i * 7);
  for (const std::size_t piece : {1u, 55u, 56u, 63u, 64u, 65u, 999u}) {
    detail::Sha256 h;
    for (std::size_t at = 0; at < bytes.size(); at += piece) h.update(std::string_view(bytes).substr(at, piece));
    EXPECT_EQ(h.hex(), sha256_hex(bytes)) << "pieces of " << piece;
  }
}

}  // namespace
}  // namespace tritonrt::test

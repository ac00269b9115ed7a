// Bundles in a process that cannot load Python (no_python.h), as on a deployment machine:
// the CLI compiles and packs the kernels in a process of its own, then their .py files are
// removed, and this process gets them by paths that never existed.

#include <nlohmann/json.hpp>
#include <tuple>

#include "stand_in_driver.h"
#include "store/files.h"
#include "tritonrt/bundle.h"

namespace tritonrt::test {
namespace {

// Where the deployed program "has" its kernels: nothing is there.
const fs::path kDeployed = "/nonexistent/app/kernels";

// Two kernels of signatures.py, each compiled for cuda:80 and cuda:90 by `bundle create
// --calls`, then the sources removed. Built once per process.
const fs::path& deploy_bundle() {
  static const fs::path bundle = [] {
    const fs::path build = scratch->dir / "build";
    fs::create_directories(build / "kernels");
    fs::copy(kKernels / "signatures.py", build / "kernels" / "signatures.py");
    // `plain` twice: with Triton's default options and with one of them spelt out, which
    // Triton compiles alike (one artifact per target).
    const nlohmann::json calls = {{{"kernel", "kernels/signatures.py:plain"}, {"signature", kPlainSignature}},
                                  {{"kernel", "kernels/signatures.py:plain"},
                                   {"signature", kPlainSignature},
                                   {"options", {{"num_warps", 4}}}},
                                  {{"kernel", "kernels/signatures.py:with_defaults"},
                                   {"signature", "*fp32,100"},
                                   {"options", {{"num_warps", 2}}}}};
    write(build / "calls.json", calls.dump());
    const auto [status, out] = cli("bundle create '" + (build / "deploy.trb").string() + "' --calls '" +
                                   (build / "calls.json").string() + "' --target cuda:80,cuda:90");
    EXPECT_EQ(status, 0) << out;
    EXPECT_NE(out.find("[6/6] with_defaults for cuda:90: 1 artifact"), std::string::npos) << out;
    fs::remove_all(build / "kernels");
    return build / "deploy.trb";
  }();
  return bundle;
}

TEST(Bundle, ADeploymentRunsItsKernelsWithoutSourcesOrPython) {
  const BundleInfo info = load_bundle(deploy_bundle());
  ASSERT_EQ(info.kernels.size(), 2u);
  for (const auto& kernel : info.kernels) {
    EXPECT_EQ(kernel.targets, (std::vector<std::string>{"cuda:80", "cuda:90"})) << kernel.identity;
    EXPECT_EQ(kernel.artifacts, 2u) << kernel.identity;
    // What the table lists of each artifact: target, options in words, specialization, hash.
    ASSERT_EQ(kernel.held.size(), 2u) << kernel.identity;
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(kernel.held[i].target, i == 0 ? "cuda:80" : "cuda:90");
      EXPECT_EQ(kernel.held[i].options, std::string("num_warps=") + (kernel.name == "plain" ? "4" : "2") +
                                            ", num_stages=3, num_ctas=1, launch_pdl=false, "
                                            "launch_cooperative_grid=false");
      EXPECT_TRUE(kernel.held[i].specialization.starts_with("[('*fp32', 'D')")) << kernel.held[i].specialization;
      EXPECT_EQ(kernel.held[i].hash.size(), 64u);
    }
  }
  auto& plain = JitFunction::get((kDeployed / "signatures.py").string(), "plain");
  for (const char* target : {"cuda:80", "cuda:90"}) {
    const auto artifact =
        plain.compile(Target::parse(target), {}, fptr(16), fptr(20), 4096, 1, 0.5, true, std::nullopt, 64, "fast");
    EXPECT_EQ(artifact->cache_dir, fs::weakly_canonical(deploy_bundle()).string());
    EXPECT_EQ(artifact->metadata.target.str(), target);
    EXPECT_EQ(artifact->binary.substr(0, 4), std::string("\x7f"
                                                         "ELF"));
  }
  // Options are keyed as Triton resolves them: a call spelling out the defaults is served the
  // artifact of one that leaves them unset.
  CompileOptions spelt_out;
  spelt_out.num_warps = 4;
  spelt_out.num_stages = 3;
  spelt_out.num_ctas = 1;
  spelt_out.launch_pdl = false;
  EXPECT_EQ(plain.compile(Target::parse("cuda:90"), spelt_out, fptr(16), fptr(20), 4096, 1, 0.5, true, std::nullopt,
                          64, "fast")
                ->metadata.hash,
            plain.compile(Target::parse("cuda:90"), {}, fptr(16), fptr(20), 4096, 1, 0.5, true, std::nullopt, 64,
                          "fast")
                ->metadata.hash);
  // The options a call gave when it was bundled are part of what it is found by.
  auto& with_defaults = JitFunction::get((kDeployed / "signatures.py").string(), "with_defaults");
  CompileOptions two_warps;
  two_warps.num_warps = 2;
  EXPECT_EQ(with_defaults.compile(Target::parse("cuda:90"), two_warps, fptr(16), 100)->metadata.num_warps, 2);
  EXPECT_FALSE(python_is_mapped());
}

TEST(Bundle, ACallItDoesNotHoldNamesTheKernelTheSpecializationAndItsTargets) {
  load_bundle(deploy_bundle());
  auto& plain = JitFunction::get((kDeployed / "signatures.py").string(), "plain");
  try {
    plain.compile(Target::parse("cuda:100"), {}, fptr(16), fptr(20), 4096, 1, 0.5, true, std::nullopt, 64, "fast");
    FAIL() << "a target the bundle does not hold was served";
  } catch (const ArtifactError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("kernel 'plain'"), std::string::npos) << what;
    // In words: the target, the options as Triton resolves them, the specialization; then
    // what the bundle holds for the kernel.
    EXPECT_NE(what.find("holds no artifact for this call (cuda:100, num_warps=4, num_stages=3, num_ctas=1, "
                        "launch_pdl=false, launch_cooperative_grid=false, specialization [('*fp32', 'D'), "),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("it holds for this kernel: cuda:80, num_warps=4, num_stages=3, "), std::string::npos) << what;
    EXPECT_NE(what.find("; cuda:90, num_warps=4, num_stages=3, "), std::string::npos) << what;
    EXPECT_NE(what.find("is not here to compile it from"), std::string::npos) << what;
  }
  EXPECT_FALSE(python_is_mapped());
}

// A kernel no loaded bundle holds, in a process without Python: the error says how kernels are
// found in bundles and what they hold, the kernel's namesakes first.
TEST(Bundle, AKernelItDoesNotHoldListsWhatTheBundlesHold) {
  load_bundle(deploy_bundle());
  for (const auto& [source, name, identity, first] :
       {std::tuple{"kernels/sigs.py", "plain", "sigs:plain", "signatures:plain"},
        std::tuple{"kernels/signatures.py", "absent", "signatures:absent", "signatures:"}}) {
    try {
      JitFunction::get((kDeployed.parent_path() / source).string(), name);
      ADD_FAILURE() << source << ":" << name << " was got";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(std::string("no loaded bundle holds ") + identity + " (a kernel is found by its file's or module's last "
                          "name and its own; they hold " + first),
                std::string::npos)
          << what;
      EXPECT_NE(what.find("signatures:with_defaults"), std::string::npos) << what;
    }
  }
  EXPECT_FALSE(python_is_mapped());
}

// Against the stand-in driver (a cuda:90 device): get, module load and first launch.
TEST(Bundle, TheFirstLaunchComesFromTheBundle) {
  FakeCudaApi fake{};
  if (const auto why = no_fake_driver(fake)) GTEST_SKIP() << *why;
  load_bundle(deploy_bundle());
  alignas(16) static float p_data[4096], q_data[4096];
  auto& fn = JitFunction::get((kDeployed / "signatures.py").string(), "plain");
  LaunchConfig config;
  config.grid = Grid{64, 1, 1};
  float* const p = p_data;
  float* const q = q_data + 1;  // not 16-byte aligned, as the bundled call (kPlainSignature)
  fn(config, p, q, 4096, 1, 0.5, true, std::nullopt, 64, "fast");
  FakeCudaStats stats{};
  fake.get_stats(&stats);
  EXPECT_EQ(stats.launches, 1u);
  FakeCudaLaunch launch{};
  ASSERT_EQ(fake.last_launches(&launch, 1), 1u);
  EXPECT_STREQ(launch.name, "plain");
  EXPECT_FALSE(python_is_mapped());
}

// Run by the test below in a process of its own, with TRITONRT_BUNDLE set and an empty index.
TEST(BundleChild, ServesFromTheEnvironmentsBundle) {
  if (std::getenv("TRITONRT_BUNDLE") == nullptr) GTEST_SKIP() << "run by Bundle.TritonrtBundleLoadsBundles";
  auto& fn = JitFunction::get((kDeployed / "signatures.py").string(), "plain");
  const auto artifact =
      fn.compile(Target::parse("cuda:80"), {}, fptr(16), fptr(20), 4096, 1, 0.5, true, std::nullopt, 64, "fast");
  std::printf("served from %s\n", artifact->cache_dir.c_str());
  EXPECT_FALSE(python_is_mapped());
}

// As the code tritonrt_add_kernels generates does, before main(): the bundle at
// TRITONRT_TEST_EMBED, registered as embedded in this program (Bundle.AnEmbeddedBundleComesFirst).
const std::string* const g_embedded = [] {
  const char* path = std::getenv("TRITONRT_TEST_EMBED");
  if (path == nullptr) return static_cast<std::string*>(nullptr);
  std::string why;
  auto* bytes = new std::string(detail::read_file(path, std::size_t{1} << 30, why).value_or(""));
  register_embedded_bundle(bytes->data(), bytes->size(), "deploy.trb embedded in the test");
  return bytes;
}();

// Run by the test below with TRITONRT_TEST_EMBED and TRITONRT_BUNDLE naming the same bundle.
TEST(BundleChild, ServesFromTheEmbeddedBundleFirst) {
  if (g_embedded == nullptr) GTEST_SKIP() << "run by Bundle.AnEmbeddedBundleComesFirst";
  auto& fn = JitFunction::get((kDeployed / "signatures.py").string(), "plain");
  const auto artifact =
      fn.compile(Target::parse("cuda:90"), {}, fptr(16), fptr(20), 4096, 1, 0.5, true, std::nullopt, 64, "fast");
  std::printf("served from %s\n", artifact->cache_dir.c_str());
  std::printf("embedded bundles: %zu\n", embedded_bundles().size());
  EXPECT_FALSE(python_is_mapped());
}

TEST(Bundle, AnEmbeddedBundleComesFirst) {
  const std::string env = "TRITONRT_CACHE_DIR='" + (scratch->dir / "empty-index").string() + "' TRITONRT_BUNDLE='" +
                          deploy_bundle().string() + "' TRITONRT_TEST_EMBED='" + deploy_bundle().string() + "' ";
  const auto [status, out] = run_child("BundleChild.ServesFromTheEmbeddedBundleFirst", env);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("served from deploy.trb embedded in the test"), std::string::npos) << out;
  EXPECT_NE(out.find("embedded bundles: 1"), std::string::npos) << out;
  // Turned off, the same program is served by TRITONRT_BUNDLE's.
  const auto [off, served] =
      run_child("BundleChild.ServesFromTheEmbeddedBundleFirst", env + "TRITONRT_EMBEDDED_BUNDLES=off ");
  EXPECT_EQ(off, 0) << served;
  EXPECT_NE(served.find("served from " + fs::weakly_canonical(deploy_bundle()).string()), std::string::npos) << served;
  // A damaged embedded bundle is an error at the first get, naming it.
  const fs::path cut = scratch->dir / "cut.trb";
  write(cut, read(deploy_bundle()).substr(0, 200));
  const auto [damaged, said] =
      run_child("BundleChild.ServesFromTheEmbeddedBundleFirst", env + "TRITONRT_TEST_EMBED='" + cut.string() + "' ");
  EXPECT_NE(damaged, 0) << said;
  EXPECT_NE(said.find("the bundle deploy.trb embedded in the test"), std::string::npos) << said;
}

// `bundle list` of a program: the bundles it embeds (none here), and a file that is neither
// a bundle nor an ELF file is said to be neither.
TEST(Bundle, TheCliListsWhatAProgramEmbeds) {
  const auto [status, out] = cli("bundle list /proc/self/exe");
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("embeds 0 bundles"), std::string::npos) << out;
  EXPECT_TRUE(read_embedded_bundles("/proc/self/exe").empty());
  const fs::path text = scratch->dir / "not-elf";
  write(text,
        "\x7f"
        "ELFbut not really");
  try {
    (void)read_embedded_bundles(text);
    ADD_FAILURE() << "a file that is no ELF file was read";
  } catch (const ArtifactError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read the bundles embedded in"), std::string::npos) << e.what();
  }
}

TEST(Bundle, TritonrtBundleLoadsBundles) {
  const std::string empty_index = "TRITONRT_CACHE_DIR='" + (scratch->dir / "empty-index").string() + "' ";
  const auto [status, out] = run_child(
      "BundleChild.*", empty_index + "TRITONRT_BUNDLE='/nonexistent/first.trb:" + deploy_bundle().string() + "'");
  // A bundle on the list that cannot be read is an error, not skipped.
  EXPECT_NE(status, 0) << out;
  EXPECT_NE(out.find("TRITONRT_BUNDLE: the bundle /nonexistent/first.trb does not exist"), std::string::npos) << out;
  const auto [good, served] =
      run_child("BundleChild.*", empty_index + "TRITONRT_BUNDLE='" + deploy_bundle().string() + "'");
  EXPECT_EQ(good, 0) << served;
  EXPECT_NE(served.find("served from " + fs::weakly_canonical(deploy_bundle()).string()), std::string::npos) << served;
}

// A .py file that is there and differs from what was bundled: the bundle is not used for it
// (and, with no Python to compile, the error says why).
TEST(Bundle, ASourceThatChangedIsNotServedFromTheBundle) {
  load_bundle(deploy_bundle());
  const fs::path edited = scratch->dir / "edited" / "signatures.py";
  fs::create_directories(edited.parent_path());
  write(edited, read(kKernels / "signatures.py") + "\n# edited\n");
  try {
    JitFunction::get(edited.string(), "plain");
    FAIL() << "a kernel whose source changed was served from the bundle";
  } catch (const PythonError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'" + edited.string() + "' differs from the source it was bundled from"), std::string::npos)
        << what;
  }
  EXPECT_FALSE(python_is_mapped());
}

// Another process tunes (IndexChild.TunesWithPython, against the stand-in driver) and the
// CLI bundles the kernel with its choice; here the first launch takes that choice.
TEST(Bundle, AnAutotunedKernelLaunchesItsBundledChoiceWithoutTuning) {
  FakeCudaApi fake{};
  if (const auto why = no_fake_driver(fake)) GTEST_SKIP() << *why;
  const auto [tuned, tune_out] = run_child("IndexChild.TunesWithPython", "", true);
  ASSERT_EQ(tuned, 0) << tune_out;
  const fs::path bundle = scratch->dir / "tuned.trb";
  const auto [status, out] =
      cli("bundle create '" + bundle.string() + "' --kernel '" + (scratch->dir / "library_style.py").string() +
          ":entry_autotuned_add' --target cuda:90");
  ASSERT_EQ(status, 0) << out;
  const BundleInfo info = load_bundle(bundle);
  ASSERT_EQ(info.kernels.size(), 1u);
  EXPECT_EQ(info.kernels[0].choices, 1u);
  EXPECT_GT(info.kernels[0].artifacts, 1u);  // every config the tuning compiled
  launch_tuned_add(fake, kDeployed / "library_style.py");
  expect_only_the_chosen_config_launched(fake);
  EXPECT_FALSE(python_is_mapped());
}

// Another process runs the heuristics (against the stand-in driver, 132 SMs) and the CLI
// bundles the kernel with their values; here they serve the same inputs without Python.
TEST(Bundle, HeuristicsServeTheInputsTheyWereRunOn) {
  FakeCudaApi fake{};
  if (const auto why = no_fake_driver(fake)) GTEST_SKIP() << *why;
  const auto [ran, ran_out] = run_child("IndexChild.RunsHeuristicsWithPython", "", true);
  ASSERT_EQ(ran, 0) << ran_out;
  const fs::path bundle = scratch->dir / "heuristics.trb";
  const auto [status, out] = cli("bundle create '" + bundle.string() + "' --kernel '" +
                                 (scratch->dir / "library_style.py").string() + ":entry_heuristic_scale'");
  ASSERT_EQ(status, 0) << out;
  const BundleInfo info = load_bundle(bundle);
  ASSERT_EQ(info.kernels.size(), 1u);
  EXPECT_EQ(info.kernels[0].heuristic_values, 2u);  // BLOCK, then EVEN (which reads BLOCK)
  EXPECT_EQ(launch_heuristic_scale(fake, kDeployed / "library_style.py", kTunedN), 256u);
  EXPECT_THROW(launch_heuristic_scale(fake, kDeployed / "library_style.py", 1000), PythonError);
  EXPECT_FALSE(python_is_mapped());
}

// Another process runs a config's pre_hook (IndexChild.RunsConfigHooksWithPython) and the CLI
// bundles the kernel with what it did; here it serves the same inputs without Python, and
// `bundle list` counts it.
TEST(Bundle, ConfigHookEffectsServeTheInputsTheyWereRunOn) {
  FakeCudaApi fake{};
  if (const auto why = no_fake_driver(fake)) GTEST_SKIP() << *why;
  const auto [ran, ran_out] = run_child("IndexChild.RunsConfigHooksWithPython", "", true);
  ASSERT_EQ(ran, 0) << ran_out;
  const fs::path bundle = scratch->dir / "hooks.trb";
  const auto [status, out] = cli("bundle create '" + bundle.string() + "' --kernel '" +
                                 (scratch->dir / "descriptor_kernels.py").string() + ":matmul_tma_layouts'");
  ASSERT_EQ(status, 0) << out;
  const BundleInfo info = load_bundle(bundle);
  ASSERT_EQ(info.kernels.size(), 1u);
  EXPECT_EQ(info.kernels[0].hook_effects, 1u);  // config 0, row-major A
  EXPECT_EQ(info.kernels[0].heuristic_values, 0u);
  const auto [listed, list_out] = cli("bundle list '" + bundle.string() + "'");
  EXPECT_EQ(listed, 0) << list_out;
  EXPECT_NE(list_out.find("0 heuristic values, 1 config hook effect, for cuda:90"), std::string::npos) << list_out;
  EXPECT_EQ(launch_layout_matmul(fake, kDeployed / "descriptor_kernels.py", true), "64x32");
  EXPECT_THROW(launch_layout_matmul(fake, kDeployed / "descriptor_kernels.py", false), PythonError);
  EXPECT_FALSE(python_is_mapped());
  // The same bundle embedded in a program (as tritonrt_add_kernels embeds one), with no index
  // and no Python to find: the hook's effect serves the launch from there.
  const auto [embedded, embedded_out] =
      run_child("BundleChild.LaunchesAHookedKernelFromTheEmbeddedBundle",
                "TRITONRT_CACHE_DIR='" + (scratch->dir / "empty-index").string() + "' TRITONRT_PYTHON=/nonexistent " +
                    "TRITONRT_TEST_EMBED='" + bundle.string() + "' ");
  EXPECT_EQ(embedded, 0) << embedded_out;
  EXPECT_NE(embedded_out.find("A's tile 64x32 from 1 embedded bundle, no libpython"), std::string::npos)
      << embedded_out;
}

// Run by the test above with TRITONRT_TEST_EMBED naming the hooked kernel's bundle.
TEST(BundleChild, LaunchesAHookedKernelFromTheEmbeddedBundle) {
  if (g_embedded == nullptr) GTEST_SKIP() << "run by Bundle.ConfigHookEffectsServeTheInputsTheyWereRunOn";
  FakeCudaApi fake{};
  if (const auto why = no_fake_driver(fake)) GTEST_SKIP() << *why;
  const std::string tile = launch_layout_matmul(fake, kDeployed / "descriptor_kernels.py", true);
  std::printf("A's tile %s from %zu embedded bundle%s\n", tile.c_str(), embedded_bundles().size(),
              python_is_mapped() ? ", libpython mapped" : ", no libpython");
}

// Whatever the damage, reading a bundle is an ArtifactError naming the file, never a crash;
// a damaged binary is caught by its checksum when it is first used.
TEST(Bundle, DamageIsDetectedNeverUsed) {
  const std::string bytes = read(deploy_bundle());
  const fs::path damaged = scratch->dir / "damaged.trb";
  const auto rejected = [&](const std::string& content, const std::string& expected) {
    write(damaged, content);
    try {
      read_bundle(damaged);
      ADD_FAILURE() << "accepted: " << expected;
    } catch (const ArtifactError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(damaged.string()), std::string::npos) << what;
      EXPECT_NE(what.find(expected), std::string::npos) << what;
    }
  };
  const std::size_t header = bytes.find('\n') + 1;
  std::size_t table_size = 0;
  ASSERT_EQ(std::sscanf(bytes.c_str(), "tritonrt-bundle %*d %zu", &table_size), 1);
  for (std::size_t cut = 0; cut < bytes.size(); cut += std::max<std::size_t>(1, bytes.size() / 97)) {
    rejected(bytes.substr(0, cut), cut < header ? "header" : "");
  }
  rejected(bytes.substr(0, bytes.size() - 1), "lies past its end (cut short?)");
  for (const std::size_t at : {header, header + table_size / 2, header + table_size - 1}) {
    std::string flipped = bytes;
    flipped[at] ^= 0x20;
    rejected(flipped, "its table does not match its checksum");
  }
  std::string future = bytes;
  future.replace(future.find(' '), bytes.find(' ', future.find(' ') + 1) - future.find(' '), " 7");
  rejected(future, "is in bundle format 7; this tritonrt (");
  rejected("#!/bin/sh\necho hello\n", "does not start with a tritonrt-bundle header");
  rejected("", "does not start with a tritonrt-bundle header");

  // The table is whole, the data is not: a bit flipped in the middle of every binary, or of
  // every kernel's entry. Read in a child, so that the good bundle loaded here does not take
  // precedence; the child gets `plain` and compiles it for cuda:80.
  const auto table = nlohmann::json::parse(bytes.substr(header, table_size));
  const std::size_t data = header + table_size;
  std::string binaries_flipped = bytes, entries_flipped = bytes;
  for (const auto& kernel : table.at("kernels")) {
    const std::size_t entry_at = data + kernel.at("entry").at(0).get<std::size_t>();
    const std::size_t entry_size = kernel.at("entry").at(1).get<std::size_t>();
    entries_flipped[entry_at + entry_size / 2] ^= 0x01;
    const auto entry = nlohmann::json::parse(bytes.substr(entry_at, entry_size));
    for (const auto& artifact : entry.at("artifacts")) {
      binaries_flipped[data + artifact.at("offset").get<std::size_t>() + artifact.at("size").get<std::size_t>() / 2] ^=
          0x01;
    }
  }
  for (const auto& [content, says] : {std::pair{binaries_flipped, "is damaged: its artifact for cuda:80|"},
                                      std::pair{entries_flipped, "is damaged: its entry for signatures:plain"}}) {
    write(damaged, content);
    ASSERT_EQ(read_bundle(damaged).kernels.size(), 2u);  // the table still reads
    const auto [status, out] =
        run_child("BundleChild.*", "TRITONRT_CACHE_DIR='" + (scratch->dir / "empty-index").string() +
                                       "' TRITONRT_BUNDLE='" + damaged.string() + "'");
    EXPECT_NE(status, 0) << says << "\n" << out;
    EXPECT_NE(out.find(says), std::string::npos) << out;
    EXPECT_NE(out.find("does not match its checksum"), std::string::npos) << out;
  }
}

// Two files of one name hold kernels of one identity: a bundle of both would be ambiguous, so
// it is refused, and a path picks one.
TEST(Bundle, KernelsSharingAnIdentityArePickedByPath) {
  for (const char* copy : {"one", "two"}) {
    fs::create_directories(scratch->dir / copy);
    fs::copy(kKernels / "signatures.py", scratch->dir / copy / "signatures.py");
    compile_elsewhere((scratch->dir / copy / "signatures.py").string() + ":with_defaults", "*fp32,100");
  }
  const fs::path bundle = scratch->dir / "picked.trb";
  const auto [both, both_out] = cli("bundle create '" + bundle.string() + "' --kernel with_defaults");
  EXPECT_NE(both, 0) << both_out;
  EXPECT_NE(both_out.find("cannot be bundled twice under one identity signatures:with_defaults"), std::string::npos)
      << both_out;
  const auto [one, one_out] = cli("bundle create '" + bundle.string() + "' --kernel '" +
                                  (scratch->dir / "two" / "signatures.py").string() + ":with_defaults'");
  ASSERT_EQ(one, 0) << one_out;
  const BundleInfo info = read_bundle(bundle);
  ASSERT_EQ(info.kernels.size(), 1u);
  EXPECT_EQ(info.kernels[0].source, (scratch->dir / "two" / "signatures.py").string());
}

TEST(Bundle, TheCliListsBundlesAndSaysWhatIsWrong) {
  const auto [listed, json] = cli("bundle list '" + deploy_bundle().string() + "' --json");
  ASSERT_EQ(listed, 0) << json;
  const auto j = nlohmann::json::parse(json);
  ASSERT_EQ(j.at("kernels").size(), 2u);
  EXPECT_EQ(j["kernels"][0]["identity"], "signatures:plain");
  EXPECT_EQ(j["kernels"][0]["targets"], nlohmann::json::array({"cuda:80", "cuda:90"}));
  const auto [text_status, text] = cli("bundle list '" + deploy_bundle().string() + "'");
  EXPECT_EQ(text_status, 0) << text;
  EXPECT_NE(text.find("signatures:with_defaults  2 artifacts"), std::string::npos) << text;

  const auto exit_code = [](int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; };
  const struct {
    std::string arguments;
    int code;
    std::string says;
  } cases[] = {
      {"bundle create /tmp/never.trb --kernel nosuch.py:nothing", 1, "nothing in the index"},
      {"bundle create /tmp/never.trb --calls calls.json", 2, "--calls needs --target"},
      {"bundle create /tmp/never.trb --calls /nonexistent/calls.json --target cuda:90", 2,
       "cannot read the calls file"},
      {"bundle create /tmp/never.trb --target cuda:90,", 2, "comma-separated list of targets"},
      {"bundle create /tmp/never.trb --frobnicate 1", 2, "--frobnicate"},
      {"bundle unpack x.trb", 2, "unknown command 'unpack' (create, list)"},
      {"bundle list /nonexistent/x.trb", 1, "the bundle /nonexistent/x.trb does not exist"},
      {"bundle list " + deploy_bundle().string() + " --yaml", 2, "--yaml"},
  };
  for (const auto& c : cases) {
    const auto [status, out] = cli(c.arguments);
    EXPECT_EQ(exit_code(status), c.code) << c.arguments << "\n" << out;
    EXPECT_NE(out.find(c.says), std::string::npos) << c.arguments << "\n" << out;
  }
  EXPECT_FALSE(fs::exists("/tmp/never.trb"));

  const fs::path calls = scratch->dir / "bad-calls.json";
  for (const auto& [content, says] : std::vector<std::pair<std::string, std::string>>{
           {"[", "is not valid JSON (it ends too early)"},
           {"{}", "must be a non-empty list of calls"},
           {R"([{"kernel": "k.py:k"}])", "call 1 needs"},
           {R"([{"kernel": "k.py:k", "signature": "1", "grid": 3}])", "call 1 has an unknown field 'grid'"},
           {R"([{"kernel": "k.py:k", "signature": "1", "options": {"num_warps": -1}}])",
            "must be a boolean or a non-negative integer"},
           {R"([{"kernel": "k.py:k", "signature": "1", "options": {"warps": 4}}])", "unknown option 'warps'"},
       }) {
    write(calls, content);
    const auto [status, out] = cli("bundle create /tmp/never.trb --calls '" + calls.string() + "' --target cuda:90");
    EXPECT_EQ(exit_code(status), 2) << content << "\n" << out;
    EXPECT_NE(out.find(says), std::string::npos) << content << "\n" << out;
  }
}

}  // namespace
}  // namespace tritonrt::test

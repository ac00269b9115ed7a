// Bad input is a typed error naming what is wrong, never a crash, a raw nlohmann or Python
// exception, or a silently different result (the defects of issue 10, one test or more each;
// the command line's side is tests/python/test_bad_input.py).

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <thread>

#include "compiler/compiler.h"
#include "reference.h"
#include "store/triton_cache.h"

namespace tritonrt::test {
namespace {

const std::string kSig = kKernels + "/signatures.py";
float* fptr(std::uintptr_t a) { return reinterpret_cast<float*>(a); }

// The message of the exception E that `f` throws; a failure for any other outcome.
template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
    return "";
  } catch (...) {
    ADD_FAILURE() << "a non-std exception escaped";
    return "";
  }
  ADD_FAILURE() << "no exception";
  return "";
}

// --- 1. non-finite constexpr defaults ------------------------------------------------------

TEST(BadInput, NonFiniteDefaultsAreCarriedFaithfully) {
  const std::string file = kKernels + "/nonfinite_defaults.py";
  auto& fn = JitFunction::get(file, "scale");
  const auto& params = fn.signature().params;
  EXPECT_EQ(params[2].default_repr, "nan");
  EXPECT_EQ(params[3].default_repr, "inf");
  EXPECT_EQ(params[4].default_repr, "-inf");
  EXPECT_EQ(fn.specialize(fptr(16), 100).repr(), reference_specialization(file, "scale", "[P(16,'float32'), 100]"));
  const auto artifact = fn.compile(Target::parse("cuda:90"), {}, fptr(16), 100);
  EXPECT_EQ(artifact->metadata.hash, reference_hash(file, "scale", "[P(16,'float32'), 100]", "cuda:90"));
  // Passed explicitly they key the same kernel as the defaults do.
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(fn.compile(Target::parse("cuda:90"), {}, fptr(16), 100, nan, inf, -inf)->metadata.hash,
            artifact->metadata.hash);
}

// --- 2. metadata and targets of any shape ------------------------------------------------------

const std::string kValidMetadata = R"({"name": "k", "hash": "abc", "target": {"backend": "cuda", "arch": 90,
  "warp_size": 32}, "triton_version": "3.6.0", "num_warps": 4, "num_ctas": 1, "num_stages": 3, "shared": 0})";

// kValidMetadata with `field` (a "key": value pair, or a bare key to drop) replaced.
std::string metadata_with(const std::string& from, const std::string& to) {
  std::string text = kValidMetadata;
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(BadInput, MetadataOfAnyShapeIsAnArtifactErrorNamingTheField) {
  EXPECT_EQ(KernelMetadata::parse(kValidMetadata).num_warps, 4);
  const std::pair<std::string, std::string> cases[] = {
      {metadata_with(R"("arch": 90)", R"("arch": null)"), "target.arch"},  // Triton's Python accepts this one
      {metadata_with(R"("arch": 90)", R"("arch": true)"), "target.arch"},
      {metadata_with(R"("arch": 90)", R"("arch": [9, 0])"), "target.arch"},
      {metadata_with(R"("num_warps": 4)", R"("num_warps": 0)"), "num_warps"},
      {metadata_with(R"("num_warps": 4)", R"("num_warps": 3)"), "num_warps"},
      {metadata_with(R"("num_warps": 4)", R"("num_warps": 4.0)"), "num_warps"},
      {metadata_with(R"("num_warps": 4)", R"("num_warps": "4")"), "num_warps"},
      {metadata_with(R"("num_warps": 4)", R"("num_warps": 4294967300)"), "num_warps"},
      {metadata_with(R"("shared": 0)", R"("shared": 1099511627776)"), "shared"},
      {metadata_with(R"("shared": 0)", R"("shared": -1)"), "shared"},
      {metadata_with(R"("num_ctas": 1)", R"("num_ctas": 3)"), "num_ctas"},
      {metadata_with(R"("warp_size": 32)", R"("warp_size": 33)"), "warp_size"},
      {metadata_with(R"("name": "k", )", ""), "'name'"},
      {metadata_with(R"("name": "k")", R"("name": "")"), "'name'"},
      {metadata_with(R"("hash": "abc")", R"("hash": 7)"), "hash"},
      {metadata_with(R"({"backend": "cuda", "arch": 90,)", R"(["cuda", 90,)").substr(0, 60), "JSON"},
      {"[1, 2, 3]", "object"},
      {"", "not valid JSON"},
      {"{\"name\": \"\xff\"}", "not valid JSON"},
      {"null", "object"},
  };
  for (const auto& [text, named] : cases) {
    const std::string message = error_of<ArtifactError>([&] { (void)KernelMetadata::parse(text); });
    EXPECT_NE(message.find(named), std::string::npos) << text << "\n  -> " << message;
  }
}

// Found by tests/fuzz: 100,000 nested arrays overflowed the stack when the field was printed
// or copied (a segfault, not an error).
TEST(BadInput, AnArtifactIsWrittenUnderItsNameMadeAPlainFileName) {
  // The name comes from the metadata, which a crafted bundle or cache entry chooses.
  const auto dir = std::filesystem::temp_directory_path() / ("tritonrt-names-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  for (const auto& [name, stem] : std::vector<std::pair<std::string, std::string>>{
           {"../../escaped", "_._.._escaped"}, {".hidden", "_hidden"}}) {
    Artifact artifact;
    artifact.metadata = KernelMetadata::parse(metadata_with(R"("name": "k")", "\"name\": \"" + name + "\""));
    artifact.binary_kind = "cubin";
    artifact.binary = "bytes";
    const auto written = write_artifact(artifact, dir / "out");
    ASSERT_EQ(written.size(), 2u);
    EXPECT_EQ(written[0], dir / "out" / (stem + ".cubin")) << name;
    EXPECT_EQ(written[1], dir / "out" / (stem + ".json")) << name;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "escaped.cubin"));
  std::filesystem::remove_all(dir);
}

TEST(BadInput, DeeplyNestedJsonIsAnErrorNotACrash) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  for (const auto& text :
       {metadata_with(R"("name": "k")", R"("name": )" + deep), metadata_with(R"("arch": 90)", R"("arch": )" + deep)}) {
    EXPECT_NE(error_of<ArtifactError>([&] { (void)KernelMetadata::parse(text); }).find("nests deeper than 64 levels"),
              std::string::npos);
  }
  const std::string answer = R"({"handle": 1, "name": "k", "params": )" + deep + "}";
  EXPECT_NE(error_of<PythonError>([&] { (void)detail::parse_kernel_description(answer); }).find("nests deeper"),
            std::string::npos);
  // A field of the wrong shape is named by its type, not printed.
  const std::string message = error_of<ArtifactError>(
      [] { (void)KernelMetadata::parse(metadata_with(R"("name": "k")", R"("name": [[1, 2], {"a": 3}])")); });
  EXPECT_NE(message.find("field 'name' should be a string, but is an array"), std::string::npos) << message;
}

// Bridge answers carry floats as float.hex() writes them; C's looser forms are not accepted.
TEST(BadInput, FloatDefaultsMustBeInFloatHexForm) {
  std::string answer = R"({"handle": 1, "name": "k", "full_name": "m.k", "file": "m.py", "decorators": [],
    "params": [{"name": "X", "is_constexpr": true, "is_const": false, "do_not_specialize": false,
                "do_not_specialize_on_alignment": false, "annotation_type": "",
                "default": {"kind": "float", "repr": "x", "value": "VALUE"}}]})";
  const auto with = [&](const std::string& value) {
    return std::string(answer).replace(answer.find("VALUE"), 5, value);
  };
  EXPECT_EQ(detail::parse_kernel_description(with("-0x1.8p+1")).defaults[0]->value.f, -3.0);
  for (const char* bad : {"0x-1p0", "0x+1p0", "--0x1p0", "1.5", "0x", ""}) {
    EXPECT_NE(error_of<PythonError>([&] { (void)detail::parse_kernel_description(with(bad)); }).find("float.hex()"),
              std::string::npos)
        << bad;
  }
}

// Names and files are not always UTF-8: a message shows such bytes as \xNN, so that it is
// valid text wherever it is printed or logged.
TEST(BadInput, MessagesEscapeBytesThatAreNotUtf8) {
  const std::string message = error_of<TargetError>([] { (void)Target::parse("\xff:90\xc3"); });
  EXPECT_NE(message.find("\\xff:90\\xc3"), std::string::npos) << message;
  const std::string accented = error_of<TargetError>([] { (void)Target::parse("cud\xc3\xa1:90"); });
  EXPECT_NE(accented.find("cud\xc3\xa1:90"), std::string::npos) << accented;  // well-formed UTF-8 stays
  EXPECT_NE(error_of<ArtifactError>([] { (void)KernelMetadata::parse("{\"name\": \"\xff\"}"); }).find("\\xff"),
            std::string::npos);
}

TEST(BadInput, TargetsOfAnyShapeAreTargetErrors) {
  for (const char* text : {"", ":", "cuda:", ":90", "cuda:9a", "cuda:-90", "hip:gfxZZZ", "hip:gfx942:sramecc+",
                           "hip:gfx", "hip:942", "hip:gfx94", "tpu:4", "cuda:90:", "\xff:90"}) {
    const std::string message = error_of<TargetError>([&] { (void)Target::parse(text); });
    EXPECT_NE(message.find("invalid target"), std::string::npos) << text << " -> " << message;
  }
  for (const char* text : {"cuda:80", "cuda:90", "cuda:100", "hip:gfx942", "hip:gfx90a", "hip:gfx1100"}) {
    EXPECT_EQ(Target::parse(text).str(), text);
  }
  EXPECT_EQ(Target::parse("hip:gfx90a").warp_size, 64);
  EXPECT_EQ(Target::parse("hip:gfx1100").warp_size, 32);
}

TEST(BadInput, TritonsAotTargetWithWarpSizeIsTakenWhenItIsTheArchitecturesOwn) {
  EXPECT_EQ(Target::parse("cuda:90:32").str(), "cuda:90");
  EXPECT_EQ(Target::parse("cuda:90:32").warp_size, 32);
  EXPECT_EQ(Target::parse("hip:gfx942:64").str(), "hip:gfx942");
  EXPECT_EQ(Target::parse("hip:gfx1100:32").warp_size, 32);
  const std::string cuda = error_of<TargetError>([] { (void)Target::parse("cuda:90:64"); });
  EXPECT_NE(cuda.find("cuda:90 runs 32-wide warps, not 64"), std::string::npos) << cuda;
  const std::string hip = error_of<TargetError>([] { (void)Target::parse("hip:gfx942:32"); });
  EXPECT_NE(hip.find("hip:gfx942 runs 64-wide warps, not 32"), std::string::npos) << hip;
  // Only as Triton writes it, so that the target prints back as the text it came from.
  EXPECT_THROW(Target::parse("cuda:90:032"), TargetError);
  for (const char* text : {"cuda:90:x", "cuda:90:+32", "cuda:90:32:1", "cuda::32", "cuda:90: 32"}) {
    const std::string message = error_of<TargetError>([&] { (void)Target::parse(text); });
    EXPECT_NE(message.find("invalid target"), std::string::npos) << text << " -> " << message;
  }
}

TEST(BadInput, OddKernelNamesAndSourcesAreSourceErrors) {
  EXPECT_NE(error_of<SourceError>([] { JitFunction::get("", "k"); }).find("tritonrt: kernel 'k'"), std::string::npos);
  EXPECT_NE(error_of<SourceError>([] { JitFunction::get(kSig, ""); }).find("no attribute"), std::string::npos);
  EXPECT_NE(error_of<SourceError>([] { JitFunction::get(kSig, std::string("pl\0ain", 6)); }).find("no attribute"),
            std::string::npos);
  EXPECT_NE(error_of<SourceError>([] { JitFunction::get(kKernels, "k"); }).find("kernels"), std::string::npos);
}

// --- 5. artifacts are checked before they are returned or loaded -------------------------------

TEST(BadInput, ArtifactChecksCatchDamagedBinariesAndForeignTargets) {
  auto& fn = JitFunction::get(kSig, "plain");
  const Target cuda90 = Target::parse("cuda:90");
  const auto good = *fn.compile(cuda90, {}, fptr(16), fptr(32), 1000, 7, 0.5, true, std::nullopt, 64, 0);
  EXPECT_EQ(detail::artifact_problem(good, cuda90), std::nullopt);
  auto problem_with = [&](auto&& edit) {
    Artifact damaged = good;
    edit(damaged);
    const auto problem = detail::artifact_problem(damaged, cuda90);
    return problem ? *problem : "(accepted)";
  };
  EXPECT_EQ(problem_with([](Artifact& a) { a.binary.clear(); }), "the binary is empty");
  EXPECT_EQ(problem_with([](Artifact& a) { a.binary = std::string(4096, 'x'); }), "the binary is not an ELF image");
  EXPECT_NE(problem_with([](Artifact& a) { a.binary.resize(100); }).find("cut short"), std::string::npos);
  EXPECT_NE(problem_with([](Artifact& a) { a.binary.resize(a.binary.size() - 1); }).find("cut short"),
            std::string::npos);
  EXPECT_NE(problem_with([](Artifact& a) { a.binary[18] = 62; }).find("ELF machine 62"), std::string::npos);
  EXPECT_NE(problem_with([](Artifact& a) { a.metadata.target.arch = "80"; }).find("not the requested cuda:90"),
            std::string::npos);
  EXPECT_NE(problem_with([](Artifact& a) { a.binary_kind = "hsaco"; }).find("expected a cubin"), std::string::npos);
}

TEST(BadInput, SetAsideMovesAnEntryOutOfTheWay) {
  const auto dir = std::filesystem::temp_directory_path() / ("tritonrt-set-aside-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "k.json") << "{";
  const std::string moved = detail::set_aside(dir.string());
  EXPECT_FALSE(std::filesystem::exists(dir));
  ASSERT_TRUE(std::filesystem::exists(std::filesystem::path(moved) / "k.json")) << moved;
  EXPECT_NE(moved.find(".invalid-"), std::string::npos);
  EXPECT_EQ(detail::set_aside(dir.string()), "");  // gone already: another process set it aside
  std::filesystem::remove_all(moved);
}

// --- 7. a get never waits for another kernel's import -------------------------------------------

TEST(BadInput, GetOfALoadedKernelDoesNotWaitForAnotherImport) {
  auto& loaded = JitFunction::get(kSig, "plain");  // imported before the slow import starts
  const std::filesystem::path gate = "/tmp/tritonrt-gated-import-" + std::to_string(::getpid());
  const auto started = std::filesystem::path(gate).replace_extension(".started");
  std::filesystem::remove(gate);
  std::filesystem::remove(started);
  std::atomic<bool> slow_done{false};
  std::thread slow([&] {
    try {
      JitFunction::get(kKernels + "/gated_import.py", "gated");
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
    slow_done = true;
  });
  // Wait until the slow import is under way (it marks its start), then ask for other kernels.
  for (int i = 0; i < 12000 && !std::filesystem::exists(started); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(std::filesystem::exists(started)) << "the gated import never started";
  EXPECT_EQ(&JitFunction::get(kSig, "plain"), &loaded);
  JitFunction::get(kSig, "annotated");  // a new kernel of a module imported already
  EXPECT_FALSE(slow_done) << "the gated import finished before it was released: the test proves nothing";
  std::ofstream(gate.string()) << "go";
  slow.join();
  EXPECT_TRUE(slow_done);
  std::filesystem::remove(gate);
  std::filesystem::remove(started);
}

}  // namespace
}  // namespace tritonrt::test

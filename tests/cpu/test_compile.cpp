// Compiling for explicit targets on a machine without a GPU: the artifact is the one
// Triton's own JIT produces for the same call (same cache hash), with its metadata parsed.

#include <gtest/gtest.h>

#include <cstdint>
#include <thread>

#include "reference.h"

namespace tritonrt::test {
namespace {

namespace py = pybind11;

const std::string kSig = kKernels + "/signatures.py";
float* fptr(std::uintptr_t a) { return reinterpret_cast<float*>(a); }

TEST(Compile, SameHashAsTritonForPlainCall) {
  auto& fn = JitFunction::get(kSig, "plain");
  const auto art =
      fn.compile(Target::parse("cuda:90"), {}, fptr(16), fptr(32), 1000, 7, 0.5, true, std::nullopt, 64, 0);
  EXPECT_EQ(
      art->metadata.hash,
      reference_hash(kSig, "plain", "[P(16,'float32'), P(32,'float32'), 1000, 7, 0.5, True, None, 64, 0]", "cuda:90"));
  EXPECT_EQ(art->binary_kind, "cubin");
  EXPECT_GT(art->binary.size(), 1000u);
  EXPECT_EQ(art->binary.substr(0, 4), std::string("\x7f"
                                                  "ELF"));
  EXPECT_EQ(art->metadata.name, "plain");
  EXPECT_EQ(art->metadata.target, Target::parse("cuda:90"));
  EXPECT_EQ(art->metadata.num_warps, 4);  // Triton's default
  EXPECT_FALSE(art->cache_dir.empty());
}

TEST(Compile, SameHashAsTritonWithOptionsAndOtherTarget) {
  auto& fn = JitFunction::get(kSig, "plain");
  CompileOptions options;
  options.num_warps = 8;
  options.num_stages = 2;
  options.enable_fp_fusion = false;
  const auto art =
      fn.compile(Target::parse("cuda:80"), options, fptr(16), fptr(20), 1, 1 << 20, 0.5, false, std::nullopt, 128, "x");
  const ReferenceGil gil;
  py::dict kw;
  kw["num_warps"] = 8;
  kw["num_stages"] = 2;
  kw["enable_fp_fusion"] = false;
  EXPECT_EQ(art->metadata.hash,
            reference_hash(kSig, "plain", "[P(16,'float32'), P(20,'float32'), 1, 2**20, 0.5, False, None, 128, 'x']",
                           "cuda:80", &kw));
  EXPECT_EQ(art->metadata.num_warps, 8);
  EXPECT_EQ(art->metadata.num_stages, 2);
  EXPECT_EQ(art->metadata.target.arch, "80");
}

// A @gluon.jit kernel compiles through Gluon's source class, as its own JIT does.
TEST(Compile, SameHashAsTritonForAGluonKernel) {
  const std::string gluon = kKernels + "/gluon_kernels.py";
  auto& fn = JitFunction::get(gluon, "gluon_scale");
  const auto art = fn.compile(Target::parse("cuda:90"), {}, fptr(16), fptr(32), 1000, 0.5, 256);
  EXPECT_EQ(art->metadata.hash, reference_hash(gluon, "gluon_scale", "[P(16,'float32'), P(32,'float32'), 1000, 0.5, 256]",
                                               "cuda:90"));
  EXPECT_EQ(art->metadata.name, "gluon_scale");
}

TEST(Compile, SameHashAsTritonForAnnotationsDefaultsAndPackages) {
  auto& annotated = JitFunction::get(kSig, "annotated");
  const auto a =
      annotated.compile(Target::parse("cuda:90"), {}, DevicePtr{reinterpret_cast<const void*>(16), DType::fp16},
                        fptr(36), 5, 1, 16u, 2.5, true, 32);
  EXPECT_EQ(a->metadata.hash, reference_hash(kSig, "annotated",
                                             "[P(16,'float16'), P(36,'float32'), 5, 1, 16, 2.5, True, 32]", "cuda:90"));
  auto& defaults = JitFunction::get(kSig, "with_defaults");
  const auto d = defaults.compile(Target::parse("cuda:90"), {}, fptr(16), 100);
  EXPECT_EQ(d->metadata.hash, reference_hash(kSig, "with_defaults", "[P(16,'float32'), 100]", "cuda:90"));
  const std::string pkg = kKernels + "/pkg/scale.py";
  auto& scaled = JitFunction::get(pkg, "double_kernel");
  const auto s = scaled.compile(Target::parse("cuda:90"), {}, fptr(16), 4096, 256);
  EXPECT_EQ(s->metadata.hash, reference_hash(pkg, "double_kernel", "[P(16,'float32'), 4096, 256]", "cuda:90"));
}

TEST(Compile, ImportableModuleNameAndPathSpellingsShareOneKernel) {
  JitFunction::get(kSig, "plain");  // starts the interpreter before the GIL is taken below
  {
    const ReferenceGil gil;
    py::module_::import("sys").attr("path").attr("append")(kKernels);
  }
  const std::string path = kKernels + "/pkg/scale.py";
  auto& by_module = JitFunction::get("pkg.scale", "double_kernel");
  auto& by_path = JitFunction::get(path, "double_kernel");
  EXPECT_EQ(&by_path, &JitFunction::get(kKernels + "/pkg/../pkg/scale.py", "double_kernel"));
  EXPECT_EQ(by_module.signature().full_name, "pkg.scale.double_kernel");
  const auto a = by_module.compile(Target::parse("cuda:90"), {}, fptr(16), 4096, 256);
  const auto b = by_path.compile(Target::parse("cuda:90"), {}, fptr(16), 4096, 256);
  EXPECT_EQ(a->metadata.hash, b->metadata.hash);
}

TEST(Compile, ResultIsCachedInMemory) {
  auto& fn = JitFunction::get(kSig, "plain");
  const auto a = fn.compile(Target::parse("cuda:90"), {}, fptr(16), fptr(32), 1000, 7, 0.5, true, std::nullopt, 64, 1);
  const auto b = fn.compile(Target::parse("cuda:90"), {}, fptr(48), fptr(64), 1032, 9, 1.5, false, std::nullopt, 64, 1);
  EXPECT_EQ(a.get(), b.get());  // same specialization: one artifact
  const auto c = fn.compile(Target::parse("cuda:90"), {.num_warps = 2}, fptr(48), fptr(64), 1032, 9, 1.5, false,
                            std::nullopt, 64, 1);
  EXPECT_NE(a.get(), c.get());
  EXPECT_EQ(c->metadata.num_warps, 2);
}

TEST(Compile, ConcurrentFirstCallsCompileOnce) {
  auto& fn = JitFunction::get(kSig, "plain");
  std::vector<std::shared_ptr<const Artifact>> results(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      try {
        results[t] = fn.compile(Target::parse("cuda:90"), {.num_warps = 1}, fptr(16), fptr(16), 33, 3, 0.5, true,
                                std::nullopt, 32, 12345);
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_NE(results[0], nullptr);
  for (const auto& r : results) EXPECT_EQ(r.get(), results[0].get());
}

TEST(Compile, ModuleIsImportedOnce) {
  auto& a = JitFunction::get(kSig, "plain");
  auto& b = JitFunction::get(kSig, "annotated");
  a.compile(Target::parse("cuda:90"), {}, fptr(16), fptr(32), 1000, 7, 0.5, true, std::nullopt, 64, 2);
  EXPECT_EQ(&a, &JitFunction::get(kSig, "plain"));
  EXPECT_NE(&a, &b);
  const ReferenceGil gil;
  const auto imports = py::module_::import("builtins").attr("tritonrt_test_imports").cast<py::list>();
  int count = 0;
  for (auto name : imports) count += py::str(name).cast<std::string>() == "signatures";
  EXPECT_EQ(count, 1);
}

TEST(Compile, MetadataParsesTritonJson) {
  const auto m = KernelMetadata::parse(R"({"name": "k", "hash": "abc", "target": {"backend": "cuda", "arch": 90,
    "warp_size": 32}, "triton_version": "3.6.0", "num_warps": 8, "num_ctas": 2, "num_stages": 3, "shared": 65536,
    "global_scratch_size": 128, "global_scratch_align": 16, "launch_pdl": true})");
  EXPECT_EQ(m.target.str(), "cuda:90");
  EXPECT_EQ(m.num_ctas, 2);
  EXPECT_EQ(m.shared, 65536);
  EXPECT_EQ(m.global_scratch_size, 128);
  EXPECT_TRUE(m.launch_pdl);
  EXPECT_FALSE(m.launch_cooperative_grid);
  EXPECT_THROW(KernelMetadata::parse(R"({"name": "k"})"), Error);
  EXPECT_THROW(KernelMetadata::parse("not json"), Error);
}

}  // namespace
}  // namespace tritonrt::test

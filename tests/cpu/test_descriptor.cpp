// Host tensor descriptors (tritonrt/tensor_descriptor.h): Triton's checks as ArgumentErrors,
// and a call taking descriptors specialized and compiled as Triton's JIT does it (the same
// type strings and cache hash, with and without TMA on the target). Launches: the fake-driver
// tests (test_fake_driver_launch.cpp) and the GPU tests (tests/gpu/test_descriptor.cpp).

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "reference.h"
#include "tritonrt/tritonrt.h"

namespace tritonrt::test {
namespace {

const std::string kDesc = kKernels + "/descriptor_kernels.py";
const void* const kBase = reinterpret_cast<const void*>(std::uintptr_t{4096});

TensorDescriptor desc_2d(const void* base, std::int64_t rows, std::int64_t cols, std::int64_t block_m,
                         std::int64_t block_n) {
  const std::int64_t shape[] = {rows, cols}, strides[] = {cols, 1}, block[] = {block_m, block_n};
  return TensorDescriptor::make(base, DType::fp16, shape, strides, block);
}

TEST(TensorDescriptor, KeepsWhatItWasMadeOf) {
  const auto d = desc_2d(kBase, 64, 128, 32, 64);
  EXPECT_EQ(d.base(), kBase);
  EXPECT_EQ(d.dtype(), DType::fp16);
  EXPECT_EQ(d.rank(), 2);
  EXPECT_EQ(std::vector<std::int64_t>(d.shape().begin(), d.shape().end()), (std::vector<std::int64_t>{64, 128}));
  EXPECT_EQ(std::vector<std::int64_t>(d.strides().begin(), d.strides().end()), (std::vector<std::int64_t>{128, 1}));
  EXPECT_EQ(std::vector<std::int64_t>(d.block_shape().begin(), d.block_shape().end()),
            (std::vector<std::int64_t>{32, 64}));
  EXPECT_EQ(d.padding(), TensorDescriptor::Padding::zero);
}

TEST(TensorDescriptor, RefusesWhatTritonRefuses) {
  const std::int64_t shape[] = {64, 128}, strides[] = {128, 1}, block[] = {32, 64};
  const std::int64_t six[] = {2, 2, 2, 2, 2, 2};
  auto make = [&](const void* base, DType t, std::span<const std::int64_t> sh, std::span<const std::int64_t> st,
                  std::span<const std::int64_t> bl, TensorDescriptor::Padding p = TensorDescriptor::Padding::zero) {
    return argument_error([&] { (void)TensorDescriptor::make(base, t, sh, st, bl, p); });
  };
  EXPECT_NE(make(kBase, DType::fp16, {}, {}, {}).find("rank 0 is outside 1 to 5"), std::string::npos);
  EXPECT_NE(make(kBase, DType::fp16, six, six, six).find("rank 6 is outside 1 to 5"), std::string::npos);
  EXPECT_NE(make(kBase, DType::fp16, shape, std::span(strides, 1), block).find("rank mismatch"), std::string::npos);
  EXPECT_NE(make(reinterpret_cast<const void*>(4104), DType::fp16, shape, strides, block).find("not 16-byte aligned"),
            std::string::npos);
  const std::int64_t odd_stride[] = {100, 1};  // 200 bytes
  EXPECT_NE(make(kBase, DType::fp16, shape, odd_stride, block).find("stride 0 (100 elements of 2 bytes)"),
            std::string::npos);
  const std::int64_t strided_last[] = {256, 2};
  EXPECT_NE(make(kBase, DType::fp16, shape, strided_last, block).find("last dimension must be contiguous"),
            std::string::npos);
  const std::int64_t empty[] = {0, 128};
  EXPECT_NE(make(kBase, DType::fp16, empty, strides, block).find("size 0 is 0, not positive"), std::string::npos);
  const std::int64_t not_pow2[] = {32, 48};
  EXPECT_NE(make(kBase, DType::fp16, shape, strides, not_pow2).find("block shape element 1 is 48, not a power of 2"),
            std::string::npos);
  const std::int64_t huge[] = {2048, 1024};
  EXPECT_NE(make(kBase, DType::fp16, shape, strides, huge).find("more than 1048576 elements"), std::string::npos);
  const std::int64_t wrapping[] = {std::int64_t{1} << 20, std::int64_t{1} << 44};  // a product that overflows
  EXPECT_NE(make(kBase, DType::fp16, shape, strides, wrapping).find("more than 1048576 elements"), std::string::npos);
  // Arithmetic at extreme values is checked, never undefined (UBSan stops the sanitized build on it).
  const std::int64_t extreme_stride[] = {std::numeric_limits<std::int64_t>::max() / 2 + 1, 1};
  EXPECT_NE(make(kBase, DType::fp32, shape, extreme_stride, block).find("is too large"), std::string::npos);
  const std::int64_t extreme_block[] = {std::int64_t{1} << 62, std::int64_t{1} << 62};
  EXPECT_NE(argument_error([&] { (void)NvmmaSharedLayout::default_for(extreme_block, DType::fp32, false, false); })
                .find("too large"),
            std::string::npos);
  const std::int64_t extreme_outer[] = {std::int64_t{1} << 62, std::int64_t{1} << 62, 2};
  EXPECT_NE(argument_error([&] { (void)NvmmaSharedLayout::default_for(extreme_outer, DType::fp16, false, false); })
                .find("overflows"),
            std::string::npos);
  const std::int64_t int_strides[] = {128, 1};
  EXPECT_NE(make(kBase, DType::i32, shape, int_strides, block, TensorDescriptor::Padding::nan)
                .find("NaN padding needs a floating-point element type, not i32"),
            std::string::npos);
  auto d = desc_2d(kBase, 64, 128, 32, 64);
  const std::int64_t three[] = {2, 2, 2};
  EXPECT_NE(argument_error([&] { d.set_block_shape(three); }).find("3 block sizes for rank 2"), std::string::npos);
}

TEST(TensorDescriptor, SpecializesAsTriton) {
  auto& fn = JitFunction::get(kDesc, "scale_2d");
  const auto in = desc_2d(kBase, 64, 128, 32, 64);
  const auto out = desc_2d(kBase, 64, 128, 32, 64);
  EXPECT_EQ(
      fn.specialize(in, out, 2.0, 32, 64).repr(),
      reference_specialization(kDesc, "scale_2d",
                               "[TensorDescriptor(P(4096,'float16'), [64, 128], [128, 1], [32, 64]),"
                               " TensorDescriptor(P(4096,'float16'), [64, 128], [128, 1], [32, 64]), 2.0, 32, 64]"));
  EXPECT_EQ(fn.specialize(in, out, 2.0, 32, 64).params[0].type, "tensordesc<fp16[32, 64]>");
  const auto narrow = desc_2d(kBase, 64, 128, 16, 64);
  EXPECT_EQ(fn.specialize(narrow, out, 2.0, 32, 64).params[0].type, "tensordesc<fp16[16, 64]>");
  // What the type says, read back (the launch's rank, the block shape Python's caller is shown).
  EXPECT_EQ(fn.specialize(narrow, out, 2.0, 32, 64).params[0].descriptor_block_shape(),
            (std::vector<std::int64_t>{16, 64}));
}

TEST(TensorDescriptor, ABlockShapeIsReadFromItsTypeStrictly) {
  const auto block = [](const char* type) { return ParamSpec{.type = type}.descriptor_block_shape(); };
  EXPECT_EQ(block("tensordesc<fp16[64, 32]>"), (std::vector<std::int64_t>{64, 32}));
  EXPECT_EQ(block("tensordesc<bf16[8,16,32]>"), (std::vector<std::int64_t>{8, 16, 32}));
  EXPECT_EQ(block("tensordesc<fp16[64, 64],NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, "
                  "rank=2, transposed=False, fp4_padded=False)>"),
            (std::vector<std::int64_t>{64, 64}));
  for (const char* other : {"*fp16", "i32", "constexpr", "tensordesc<fp16>", "tensordesc<fp16[]>",
                            "tensordesc<fp16[64, x]>", "tensordesc<fp16[0, 32]>", "tensordesc<fp16[64,, 32]>",
                            "tensordesc<fp16[-8, 32]>", "tensordesc<fp16[64 32]>"}) {
    EXPECT_TRUE(block(other).empty()) << other;
  }
}

TEST(TensorDescriptor, CompilesWithTritonsHashWithAndWithoutTma) {
  auto& fn = JitFunction::get(kDesc, "scale_2d");
  const auto in = desc_2d(kBase, 64, 128, 32, 64);
  const auto out = desc_2d(kBase, 64, 128, 32, 64);
  const std::string args =
      "[TensorDescriptor(P(4096,'float16'), [64, 128], [128, 1], [32, 64]),"
      " TensorDescriptor(P(4096,'float16'), [64, 128], [128, 1], [32, 64]), 2.0, 32, 64]";
  // Hopper: both descriptors become TMA descriptors, with the encoding Triton's metadata gives.
  const auto hopper = fn.compile(Target::parse("cuda:90"), {}, in, out, 2.0, 32, 64);
  EXPECT_EQ(hopper->metadata.hash, reference_hash(kDesc, "scale_2d", args, "cuda:90"));
  ASSERT_EQ(hopper->metadata.tensordesc_meta.size(), 2u);
  EXPECT_EQ(hopper->metadata.tensordesc_meta[0].elem_size, 2);
  EXPECT_EQ(hopper->metadata.tensordesc_meta[0].block_size, (std::vector<std::int64_t>{32, 64}));
  // Ampere: no TMA; the kernel takes each descriptor as its base, shape and strides.
  const auto ampere = fn.compile(Target::parse("cuda:80"), {}, in, out, 2.0, 32, 64);
  EXPECT_EQ(ampere->metadata.hash, reference_hash(kDesc, "scale_2d", args, "cuda:80"));
  EXPECT_TRUE(ampere->metadata.tensordesc_meta.empty());
}

TEST(TensorDescriptor, CannotBeAConstexpr) {
  auto& fn = JitFunction::get(kDesc, "scale_2d");
  const auto d = desc_2d(kBase, 64, 128, 32, 64);
  EXPECT_NE(argument_error([&] { (void)fn.specialize(d, d, 2.0, d, 64); })
                .find("is tl.constexpr: expected a bool, integer, float, string, dtype or None, got a tensor "
                      "descriptor (tensordesc<fp16[32, 64]>)"),
            std::string::npos);
}

// A heuristic that reads a descriptor sees Triton's TensorDescriptor (its block shape here);
// it reads no memoizable value, so it runs on every call, and the call is Python's.
TEST(TensorDescriptor, APythonHeuristicReadsItAsTritonsClass) {
  auto& fn = JitFunction::get(kDesc, "scale_2d_heuristic");
  const auto wide = desc_2d(kBase, 64, 128, 32, 64);
  const auto narrow = desc_2d(kBase, 64, 128, 32, 16);
  EXPECT_EQ(fn.specialize(wide, wide, 2.0, 32).params[4].value, "64");
  EXPECT_EQ(fn.specialize(narrow, narrow, 2.0, 32).params[4].value, "16") << "not memoized on the first call";
  EXPECT_EQ(
      fn.specialize(narrow, narrow, 2.0, 32).repr(),
      reference_specialization(kDesc, "scale_2d_heuristic",
                               "[TensorDescriptor(P(4096,'float16'), [64, 128], [128, 1], [32, 16]),"
                               " TensorDescriptor(P(4096,'float16'), [64, 128], [128, 1], [32, 16]), 2.0, 32, 16]"));
}

// Triton's tutorials (persistent matmul, fused attention) pass descriptors with a placeholder
// block shape and let each autotune config's pre_hook set the tiles it loads: each config
// compiles with its hook's block shapes, and with the hash Triton's own tuner gives it.
TEST(TensorDescriptor, AConfigPreHookSetsTheBlockShapesEachConfigCompiles) {
  auto& fn = JitFunction::get(kDesc, "matmul_tma_tuned");
  const std::int64_t shape[] = {256, 256}, strides[] = {256, 1}, placeholder[] = {1, 1};
  const auto a = TensorDescriptor::make(kBase, DType::fp16, shape, strides, placeholder);
  const auto configs = fn.compile_configs(Target::parse("cuda:90"), {}, a, a, a, 256);
  ASSERT_EQ(configs.size(), 2u);
  const std::vector<std::vector<std::int64_t>> a_blocks = {{64, 32}, {128, 64}};
  const std::string desc = "TensorDescriptor(P(4096,'float16'), [256, 256], [256, 1], [1, 1])";
  const std::string args = "[" + desc + ", " + desc + ", " + desc + ", 256]";
  for (std::size_t c = 0; c < 2; ++c) {
    ASSERT_TRUE(configs[c].artifact) << configs[c].error;
    const auto& meta = configs[c].artifact->metadata.tensordesc_meta;
    ASSERT_EQ(meta.size(), 3u);
    EXPECT_EQ(meta[0].block_size, a_blocks[c]) << configs[c].config;
    EXPECT_EQ(configs[c].artifact->metadata.hash,
              triton_decorated_run(kDesc, "matmul_tma_tuned", args, static_cast<int>(c)).hash)
        << configs[c].config;
  }
  EXPECT_EQ(a.block_shape()[0], 1) << "the caller's descriptor is left as it was";
}

// The kernels of tests/kernels/hopper_kernels.py, written as Triton's persistent-matmul and
// fused-attention tutorials write theirs: each config (after the attention's pruning) compiles
// with the block shapes its pre_hook sets and with the hash Triton's own tuner gives it.
TEST(TensorDescriptor, TutorialStyleKernelsCompileEachConfigWithTritonsHash) {
  const std::string source = kKernels + "/hopper_kernels.py";
  const std::int64_t placeholder[] = {1, 1};
  const auto fp16 = [&](std::int64_t rows, std::int64_t cols) {
    const std::int64_t shape[] = {rows, cols}, strides[] = {cols, 1};
    return TensorDescriptor::make(kBase, DType::fp16, shape, strides, placeholder);
  };
  const auto text = [](std::int64_t rows, std::int64_t cols) {
    const std::string shape = std::to_string(rows) + ", " + std::to_string(cols);
    return "TensorDescriptor(P(4096,'float16'), [" + shape + "], [" + std::to_string(cols) + ", 1], [1, 1])";
  };
  struct Case {
    const char* name;
    std::vector<ConfigArtifact> configs;
    std::string args;
    std::vector<int> kept;  // the configs pruning keeps, by index
  };
  auto& matmul = JitFunction::get(source, "matmul_persistent");
  auto& attention = JitFunction::get(source, "attention_forward");
  const auto a = fp16(512, 256), b = fp16(384, 256), c = fp16(512, 384), qkvo = fp16(4 * 1024, 128);
  const Case cases[] = {
      {"matmul_persistent",
       matmul.compile_configs(Target::parse("cuda:90"), {}, a, b, c, 512, 384, 256, 132),
       "[" + text(512, 256) + ", " + text(384, 256) + ", " + text(512, 384) + ", 512, 384, 256, 132]",
       {0, 1, 2}},
      {"attention_forward",
       attention.compile_configs(Target::parse("cuda:90"), {}, 0.125, qkvo, qkvo, qkvo, qkvo, 1024, 128),
       "[0.125, " + text(4096, 128) + ", " + text(4096, 128) + ", " + text(4096, 128) + ", " + text(4096, 128) +
           ", 1024, 128]",
       {0, 2}},
  };
  for (const auto& k : cases) {
    ASSERT_EQ(k.configs.size(), k.kept.size()) << k.name;
    for (std::size_t i = 0; i < k.kept.size(); ++i) {
      ASSERT_TRUE(k.configs[i].artifact) << k.name << ": " << k.configs[i].error;
      EXPECT_NE(k.configs[i].artifact->metadata.tensordesc_meta.at(0).block_size, (std::vector<std::int64_t>{1, 1}));
      EXPECT_EQ(k.configs[i].artifact->metadata.hash, triton_decorated_run(source, k.name, k.args, k.kept[i]).hash)
          << k.name << ": " << k.configs[i].config;
    }
  }
}

// JitFunction::set_config_hook: the tiles set in C++, the configs' Python pre_hooks (which
// raise here) not run; each config compiles with its tiles and the hash Triton gives the
// kernel under its decorators called with those descriptors and the config's values.
TEST(TensorDescriptor, ACppConfigHookSetsTheTilesInPlaceOfThePythonOnes) {
  auto& fn = JitFunction::get(kDesc, "matmul_tma_cpp_hook");
  const std::int64_t shape[] = {256, 256}, strides[] = {256, 1}, placeholder[] = {1, 1};
  const auto a = TensorDescriptor::make(kBase, DType::fp16, shape, strides, placeholder);
  const auto compile = [&] { return fn.compile_configs(Target::parse("cuda:90"), {}, a, a, a, 256); };
  const auto python_hook_raises = [&] {
    try {
      (void)compile();
    } catch (const Error& e) {
      return std::string(e.what()).find("this hook is replaced in C++") != std::string::npos;
    }
    return false;
  };
  EXPECT_TRUE(python_hook_raises());
  int calls = 0;
  fn.set_config_hook([&](const BoundArgs& args, BlockShapes& tiles) {
    ++calls;
    const std::int64_t m = args.integer("BLOCK_M"), n = args.integer("BLOCK_N"), k = args.integer("BLOCK_K");
    tiles.set("a_desc", {m, k});
    tiles.set("b_desc", {k, n});
    tiles.set("c_desc", {m, n});
  });
  const auto configs = compile();
  EXPECT_EQ(calls, 2);
  const std::int64_t tiles[2][3] = {{64, 64, 32}, {128, 64, 64}};
  for (std::size_t c = 0; c < 2; ++c) {
    ASSERT_TRUE(configs[c].artifact) << configs[c].error;
    const auto [m, n, k] = tiles[c];
    EXPECT_EQ(configs[c].artifact->metadata.tensordesc_meta.at(0).block_size, (std::vector<std::int64_t>{m, k}));
    const auto desc = [](std::int64_t rows, std::int64_t cols) {
      return "TensorDescriptor(P(4096,'float16'), [256, 256], [256, 1], [" + std::to_string(rows) + ", " +
             std::to_string(cols) + "])";
    };
    const std::string args = "[" + desc(m, k) + ", " + desc(k, n) + ", " + desc(m, n) + ", 256, " + std::to_string(m) +
                             ", " + std::to_string(n) + ", " + std::to_string(k) + "]";
    const ReferenceGil gil;
    pybind11::dict options;
    options["num_warps"] = c == 0 ? 4 : 8;
    EXPECT_EQ(configs[c].artifact->metadata.hash,
              reference_hash(kDesc, "matmul_tma_cpp_hook", args, "cuda:90", &options));
  }
  BlockShapes unknown(fn.signature());
  EXPECT_NE(argument_error([&] {
              unknown.set("d_desc", {16, 16});
            }).find("has no parameter 'd_desc'"),
            std::string::npos);
  fn.set_config_hook({});
  EXPECT_TRUE(python_hook_raises()) << "the Python hooks restored";
}

// Gluon's host descriptors carry a shared-memory layout, which their type names
// ("tensordesc<fp16[64, 64],NVMMASharedLayout(...)>"): the same type, specialization and hash
// as Triton's for Gluon's default layouts (transposed, narrow, few rows) and a chosen one.
TEST(TensorDescriptor, WithAGluonLayoutSpecializesAndCompilesAsGluon) {
  const std::string source = kKernels + "/gluon_kernels.py";
  auto& fn = JitFunction::get(source, "gluon_tma_scale");
  struct Case {
    std::vector<std::int64_t> block;
    bool transposed;
    const char* layout;  // Python, for Triton's side
  };
  const Case cases[] = {
      {{64, 64}, false, "NVMMASharedLayout.get_default_for([64, 64], gl.float16)"},
      {{64, 16}, false, "NVMMASharedLayout.get_default_for([64, 16], gl.float16)"},
      {{4, 64}, false, "NVMMASharedLayout.get_default_for([4, 64], gl.float16)"},
      {{32, 64}, true, "NVMMASharedLayout.get_default_for([32, 64], gl.float16, transposed=True)"},
  };
  for (const auto& c : cases) {
    const std::int64_t shape[] = {128, 128}, strides[] = {128, 1};
    auto d = TensorDescriptor::make(kBase, DType::fp16, shape, strides, c.block);
    d.set_layout(NvmmaSharedLayout::default_for(c.block, DType::fp16, c.transposed));
    const std::string block = "[" + std::to_string(c.block[0]) + ", " + std::to_string(c.block[1]) + "]";
    const std::string desc =
        "GluonTensorDescriptor(P(4096,'float16'), [128, 128], [128, 1], " + block + ", " + c.layout + ")";
    const std::string args = "[" + desc + ", " + desc + ", 2.0]";
    EXPECT_EQ(fn.specialize(d, d, 2.0).repr(), reference_specialization(source, "gluon_tma_scale", args)) << c.layout;
  }
  const std::int64_t shape[] = {128, 128}, strides[] = {128, 1}, block[] = {64, 64};
  auto d = TensorDescriptor::make(kBase, DType::fp16, shape, strides, block);
  d.set_layout({.swizzle_byte_width = 64, .element_bitwidth = 16});
  const auto artifact = fn.compile(Target::parse("cuda:90"), {}, d, d, 2.0);
  const std::string desc =
      "GluonTensorDescriptor(P(4096,'float16'), [128, 128], [128, 1], [64, 64], "
      "NVMMASharedLayout(swizzle_byte_width=64, element_bitwidth=16))";
  EXPECT_EQ(artifact->metadata.hash,
            reference_hash(source, "gluon_tma_scale", "[" + desc + ", " + desc + ", 2.0]", "cuda:90"));
  ASSERT_EQ(artifact->metadata.tensordesc_meta.size(), 2u);
  EXPECT_EQ(artifact->metadata.tensordesc_meta[0].swizzle, 2) << "CU_TENSOR_MAP_SWIZZLE_64B";
  auto other = d;
  other.set_layout({.swizzle_byte_width = 128, .element_bitwidth = 16});
  EXPECT_NE(fn.compile(Target::parse("cuda:90"), {}, other, other, 2.0)->metadata.hash, artifact->metadata.hash)
      << "the layout is part of the key";
  EXPECT_NE(argument_error([&] { d.set_layout({.swizzle_byte_width = 48}); }).find("swizzle_byte_width 48 is not"),
            std::string::npos);
  EXPECT_NE(argument_error([&] { d.set_layout({.element_bitwidth = 12}); }).find("element_bitwidth 12 is not"),
            std::string::npos);
  EXPECT_NE(argument_error([&] { d.set_layout({.element_bitwidth = 32}); }).find("element_bitwidth 32 for fp16"),
            std::string::npos);
  const std::int64_t narrow[] = {64, 16};
  EXPECT_NE(argument_error([&] {
              d.set_block_shape(narrow);
            }).find("a 64-byte swizzle needs the last block dimension to be at least 32, not 16"),
            std::string::npos)
      << "with a layout, the block shape is checked against its swizzle";
}

TEST(TensorDescriptor, ABlockShapeAHookSetsIsCheckedAsAnyOther) {
  auto& fn = JitFunction::get(kDesc, "matmul_tma_bad_hook");
  const std::int64_t shape[] = {256, 256}, strides[] = {256, 1}, placeholder[] = {1, 1};
  const auto a = TensorDescriptor::make(kBase, DType::fp16, shape, strides, placeholder);
  const std::string error =
      argument_error([&] { (void)fn.compile_configs(Target::parse("cuda:90"), {}, a, a, a, 256); });
  EXPECT_NE(error.find("parameter 'a_desc' (#0): was given a block shape by an autotune hook"), std::string::npos)
      << error;
  EXPECT_NE(error.find("block shape element 0 is 48, not a power of 2"), std::string::npos) << error;
  EXPECT_EQ(error.find("tritonrt:", 1), std::string::npos) << "one prefix, not one per message quoted: " << error;
}

}  // namespace
}  // namespace tritonrt::test

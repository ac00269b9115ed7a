// Tuple arguments (std::tuple, std::pair, nested): specialized as Triton's binder specializes
// them (each element as an argument of a plain parameter; None and 1 elements become
// constexprs), compiled with Triton's hash, a tuple passed to a tl.constexpr parameter keyed
// by value, the decorators shown Python tuples, tensor descriptors inside, and the errors.
// Launches (and an autotuner keyed on a tuple): the fake-driver tests
// (test_fake_driver_launch.cpp, test_tuple_descriptors.cpp) and the GPU tests
// (Parity.TupleArguments in tests/gpu/test_parity.cpp).

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "reference.h"
#include "tritonrt/tritonrt.h"

namespace tritonrt::test {
namespace {

const std::string kTuples = kKernels + "/tuple_kernels.py";
const auto* const kF32 = reinterpret_cast<const float*>(std::uintptr_t{4096});
const DevicePtr kF16{reinterpret_cast<const void*>(std::uintptr_t{8192}), DType::fp16};
const auto* const kOdd = reinterpret_cast<const float*>(std::uintptr_t{4100});  // not 16-byte aligned

TEST(Tuples, NestedTuplesSpecializeAsTriton) {
  auto& fn = JitFunction::get(kTuples, "tuple_combine");
  // Two deep, mixing pointers, floats, integers and the elements that become constexprs.
  const auto spec = fn.specialize(std::make_tuple(kF32, kF16), kF32,
                                  std::make_tuple(std::make_pair(2.0, 1), std::make_tuple(3, std::nullopt)), 1000, 128);
  EXPECT_EQ(spec.repr(), reference_specialization(kTuples, "tuple_combine",
                                                  "[(P(4096,'float32'), P(8192,'float16')), P(4096,'float32'),"
                                                  " ((2.0, 1), (3, None)), 1000, 128]"));
  ASSERT_EQ(spec.params[2].elements.size(), 2u);
  EXPECT_EQ(spec.params[2].type, "(('fp32', 'constexpr'), ('i32', 'constexpr'))");
  EXPECT_EQ(spec.params[2].elements[0].elements[1].value, "1");

  // Other values of the same shape: alignment, 64-bit and unsigned integers, bools, one
  // element tuples and an empty one.
  const std::uint64_t huge = std::uint64_t{1} << 63;
  EXPECT_EQ(fn.specialize(std::make_tuple(kOdd), kF32,
                          std::make_tuple(std::make_tuple(std::int64_t{1} << 40, huge, true), std::make_tuple()), 7, 64)
                .repr(),
            reference_specialization(kTuples, "tuple_combine",
                                     "[(P(4100,'float32'),), P(4096,'float32'),"
                                     " ((1 << 40, 1 << 63, True), ()), 7, 64]"));
}

TEST(Tuples, DoNotSpecializeReachesNoElement) {
  auto& fn = JitFunction::get(kTuples, "tuple_unspecialized");
  EXPECT_EQ(
      fn.specialize(std::make_pair(kF32, 16), kF32, 64, 32).repr(),
      reference_specialization(kTuples, "tuple_unspecialized", "[(P(4096,'float32'), 16), P(4096,'float32'), 64, 32]"));
  EXPECT_EQ(
      fn.specialize(std::make_pair(kF32, 1), kF32, 64, 32).repr(),
      reference_specialization(kTuples, "tuple_unspecialized", "[(P(4096,'float32'), 1), P(4096,'float32'), 64, 32]"));
}

TEST(Tuples, CompileWithTritonsHash) {
  auto& fn = JitFunction::get(kTuples, "tuple_combine");
  const auto coeffs = std::make_tuple(std::make_pair(2.0, 1), std::make_tuple(3, std::nullopt));
  const std::string args =
      "[(P(4096,'float32'), P(8192,'float16')), P(4096,'float32'), ((2.0, 1), (3, None)), 1000, 128]";
  for (const char* target : {"cuda:90", "cuda:80"}) {
    const auto artifact = fn.compile(Target::parse(target), {}, std::make_tuple(kF32, kF16), kF32, coeffs, 1000, 128);
    EXPECT_EQ(artifact->metadata.hash, reference_hash(kTuples, "tuple_combine", args, target)) << target;
  }
  // A bias in place of None and a scale other than 1: another specialization, Triton's hash.
  const auto biased = fn.compile(Target::parse("cuda:90"), {}, std::make_tuple(kF32, kF16), kF32,
                                 std::make_tuple(std::make_pair(2.0, 0.5f), std::make_tuple(3, 0.25)), 1000, 128);
  EXPECT_EQ(biased->metadata.hash,
            reference_hash(kTuples, "tuple_combine",
                           "[(P(4096,'float32'), P(8192,'float16')), P(4096,'float32'), ((2.0, 0.5), (3, 0.25)), 1000, "
                           "128]",
                           "cuda:90"));
}

TEST(Tuples, AConstexprTupleIsKeyedByValue) {
  auto& fn = JitFunction::get(kTuples, "tuple_shape");
  const auto spec = fn.specialize(kF32, kF32, 64, std::make_pair(16, 32));
  EXPECT_EQ(spec.repr(),
            reference_specialization(kTuples, "tuple_shape", "[P(4096,'float32'), P(4096,'float32'), 64, (16, 32)]"));
  EXPECT_EQ(spec.params[3].value, "(16, 32)");
  const auto a = fn.compile(Target::parse("cuda:90"), {}, kF32, kF32, 64, std::make_pair(16, 32));
  const auto b = fn.compile(Target::parse("cuda:90"), {}, kF32, kF32, 64, std::make_pair(32, 16));
  EXPECT_EQ(a->metadata.hash,
            reference_hash(kTuples, "tuple_shape", "[P(4096,'float32'), P(4096,'float32'), 64, (16, 32)]", "cuda:90"));
  EXPECT_EQ(b->metadata.hash,
            reference_hash(kTuples, "tuple_shape", "[P(4096,'float32'), P(4096,'float32'), 64, (32, 16)]", "cuda:90"));
  EXPECT_NE(a->metadata.hash, b->metadata.hash);
}

TEST(Tuples, AHeuristicReadsThePythonTuple) {
  auto& fn = JitFunction::get(kTuples, "tuple_heuristic");
  const auto srcs = std::make_pair(kF32, kF32);
  // The heuristic reads coeffs[1]: a tuple is read whole, so it runs on every call (no memo).
  EXPECT_EQ(fn.specialize(srcs, kF32, std::make_pair(2.0, std::nullopt), 64, 32).params[5].value, "False");
  EXPECT_EQ(fn.specialize(srcs, kF32, std::make_pair(2.0, 0.5), 64, 32).params[5].value, "True");
  const auto artifact = fn.compile(Target::parse("cuda:90"), {}, srcs, kF32, std::make_pair(2.0, std::nullopt), 64, 32);
  EXPECT_EQ(artifact->metadata.hash,
            triton_decorated_run(kTuples, "tuple_heuristic",
                                 "[(P(4096,'float32'), P(4096,'float32')), P(4096,'float32'), (2.0, None), 64, 32]")
                .hash);
}

TEST(Tuples, AnAutotunedKernelCompilesEachConfigWithTritonsHash) {
  auto& fn = JitFunction::get(kTuples, "tuple_tuned");
  const auto configs = fn.compile_configs(Target::parse("cuda:90"), {}, std::make_pair(kF32, kF32), kF32, 1000);
  ASSERT_EQ(configs.size(), 2u);
  for (std::size_t i = 0; i < configs.size(); ++i) {
    ASSERT_NE(configs[i].artifact, nullptr) << configs[i].error;
    EXPECT_EQ(
        configs[i].artifact->metadata.hash,
        triton_decorated_run(kTuples, "tuple_tuned",
                             "[(P(4096,'float32'), P(4096,'float32')), P(4096,'float32'), 1000]", static_cast<int>(i))
            .hash)
        << configs[i].config;
  }
}

TEST(Tuples, WhatTheyCannotHoldIsAnArgumentError) {
  auto& combine = JitFunction::get(kTuples, "tuple_combine");
  const auto coeffs = std::make_tuple(std::make_pair(2.0, 1), std::make_tuple(3, std::nullopt));
  EXPECT_NE(argument_error([&] {
              (void)combine.specialize(std::make_tuple(kF32, std::string_view("x")), kF32, coeffs, 64, 32);
            }).find("parameter 'srcs' (#0): tuple element [1]: only tl.constexpr parameters take strings"),
            std::string::npos);
  EXPECT_NE(argument_error([&] {
              (void)combine.specialize(std::make_tuple(kF32, kF32), kF32,
                                       std::make_tuple(std::make_pair(1e300, 1), std::make_tuple(3, std::nullopt)), 64,
                                       32);
            }).find("parameter 'coeffs' (#2): tuple element [0][0]: value 1e+300 overflows fp32"),
            std::string::npos);
  const std::int64_t shape[] = {64}, strides[] = {1}, block[] = {16};
  const auto d = TensorDescriptor::make(kF32, DType::fp32, shape, strides, block);
  EXPECT_NE(argument_error([&] {
              (void)combine.specialize(std::make_tuple(kF32, std::make_tuple(std::nullopt, "x")), kF32, coeffs, 64, 32);
            }).find("parameter 'srcs' (#0): tuple element [1][1]: only tl.constexpr parameters take strings"),
            std::string::npos);
  auto& shape_fn = JitFunction::get(kTuples, "tuple_shape");
  EXPECT_NE(argument_error([&] {
              (void)shape_fn.specialize(kF32, kF32, 64, std::make_pair(16, kF32));
            }).find("parameter 'SHAPE' (#3): tuple element [1]: is tl.constexpr: a tuple passed to it holds"),
            std::string::npos);
  EXPECT_NE(argument_error([&] {
              (void)shape_fn.specialize(kF32, kF32, 64, std::make_pair(16, d));
            }).find("parameter 'SHAPE' (#3): tuple element [1]: is tl.constexpr: a tuple passed to it holds"),
            std::string::npos);
}

// Descriptors inside tuples, beside a descriptor parameter and nested: each typed by its
// element type and block shape and keyed None as Triton's binder does, compiled with Triton's
// hash for targets with TMA (one map per descriptor, in the order Triton's launcher expands
// them) and without. Triton 3.6 compiles these too; launching them: test_tuple_descriptors.cpp.
TEST(Tuples, TensorDescriptorsInsideSpecializeAndCompileAsTriton) {
  const auto matrix = [](std::uintptr_t base, std::int64_t block_m) {
    const std::int64_t shape[] = {64, 128}, strides[] = {128, 1}, block[] = {block_m, 64};
    return TensorDescriptor::make(reinterpret_cast<const void*>(base), DType::fp16, shape, strides, block);
  };
  auto& scale = JitFunction::get(kTuples, "tuple_descriptor_scale");
  const std::string args =
      "[(TensorDescriptor(P(4096,'float16'), [64, 128], [128, 1], [16, 64]), 3),"
      " TensorDescriptor(P(8192,'float16'), [64, 128], [128, 1], [32, 64]), 32, 64]";
  const auto spec = scale.specialize(std::make_tuple(matrix(4096, 16), 3), matrix(8192, 32), 32, 64);
  EXPECT_EQ(spec.repr(), reference_specialization(kTuples, "tuple_descriptor_scale", args));
  EXPECT_EQ(spec.params[0].type, "('tensordesc<fp16[16, 64]>', 'i32')");
  for (const char* target : {"cuda:90", "cuda:80"}) {
    const auto artifact =
        scale.compile(Target::parse(target), {}, std::make_tuple(matrix(4096, 16), 3), matrix(8192, 32), 32, 64);
    EXPECT_EQ(artifact->metadata.hash, reference_hash(kTuples, "tuple_descriptor_scale", args, target)) << target;
    const auto& metas = artifact->metadata.tensordesc_meta;
    if (std::string(target) == "cuda:80") {
      EXPECT_TRUE(metas.empty());
      continue;
    }
    ASSERT_EQ(metas.size(), 2u);
    EXPECT_EQ(metas[0].block_size, (std::vector<std::int64_t>{16, 64}));  // the tuple's first
    EXPECT_EQ(metas[1].block_size, (std::vector<std::int64_t>{32, 64}));
  }

  auto& nested = JitFunction::get(kTuples, "tuple_descriptors_nested");
  const std::string nested_args =
      "[(TensorDescriptor(P(4096,'float16'), [64, 128], [128, 1], [32, 64]), (2.5,"
      " TensorDescriptor(P(8192,'float16'), [64, 128], [128, 1], [16, 64]))), 48, 32, 64]";  // (out, (factor, in))
  const auto descs = std::make_tuple(matrix(4096, 32), std::make_pair(2.5, matrix(8192, 16)));
  EXPECT_EQ(nested.specialize(descs, 48, 32, 64).repr(),
            reference_specialization(kTuples, "tuple_descriptors_nested", nested_args));
  const auto artifact = nested.compile(Target::parse("cuda:90"), {}, descs, 48, 32, 64);
  EXPECT_EQ(artifact->metadata.hash, reference_hash(kTuples, "tuple_descriptors_nested", nested_args, "cuda:90"));
  ASSERT_EQ(artifact->metadata.tensordesc_meta.size(), 2u);
  EXPECT_EQ(artifact->metadata.tensordesc_meta[1].block_size, (std::vector<std::int64_t>{16, 64}));
}

}  // namespace
}  // namespace tritonrt::test

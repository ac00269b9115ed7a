// Host tensor descriptors (tritonrt/tensor_descriptor.h): Triton's checks as ArgumentErrors,
// and a call taking descriptors specialized and compiled as Triton's JIT does it (the same
// type strings and cache hash, with and without TMA on the target). Launches: the fake-driver
// tests (test_fake_driver_launch.cpp) and the GPU tests (tests/gpu/test_descriptor.cpp).

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

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

template <class F>
std::string argument_error(F&& f) {
  try {
    f();
  } catch (const ArgumentError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ArgumentError";
  return "";
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
  EXPECT_EQ(fn.specialize(in, out, 2.0, 32, 64).repr(),
            reference_specialization(kDesc, "scale_2d",
                                     "[TensorDescriptor(P(4096,'float16'), [64, 128], [128, 1], [32, 64]),"
                                     " TensorDescriptor(P(4096,'float16'), [64, 128], [128, 1], [32, 64]), 2.0, 32, 64]"));
  EXPECT_EQ(fn.specialize(in, out, 2.0, 32, 64).params[0].type, "tensordesc<fp16[32, 64]>");
  const auto narrow = desc_2d(kBase, 64, 128, 16, 64);
  EXPECT_EQ(fn.specialize(narrow, out, 2.0, 32, 64).params[0].type, "tensordesc<fp16[16, 64]>");
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

TEST(TensorDescriptor, ShownToAPythonHeuristicIsAnErrorNamingTheParameter) {
  auto& fn = JitFunction::get(kDesc, "scale_2d_heuristic");
  const auto d = desc_2d(kBase, 64, 128, 32, 64);
  const std::string error = argument_error([&] { (void)fn.specialize(d, d, 2.0, 32); });
  EXPECT_NE(error.find("parameter 'in_desc'"), std::string::npos) << error;
  EXPECT_NE(error.find("is a tensor descriptor, which tritonrt does not show to Python code"), std::string::npos)
      << error;
}

}  // namespace
}  // namespace tritonrt::test

// Parity: the specialization tritonrt builds in C++ equals the one Triton's own binder
// builds for the same values (rules of DESIGN.md's parity contract, one by one).

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>

#include "reference.h"

namespace tritonrt::test {
namespace {

const std::string kSig = kKernels + "/signatures.py";

float* fptr(std::uintptr_t a) { return reinterpret_cast<float*>(a); }
DevicePtr dptr(std::uintptr_t a, DType t) { return DevicePtr{reinterpret_cast<const void*>(a), t}; }

#define EXPECT_PARITY(kernel, py_args, ...)                                                          \
  do {                                                                                               \
    auto& fn_ = JitFunction::get(kSig, kernel);                                                      \
    const std::string ours_ = fn_.specialize(__VA_ARGS__).repr();                                    \
    EXPECT_EQ(ours_, reference_specialization(kSig, kernel, py_args)) << "python args: " << py_args; \
  } while (0)

TEST(Specialization, PointersByAlignmentAndIntegersByValue) {
  EXPECT_PARITY("plain", "[P(0x1000,'float32'), P(0x1004,'float32'), 17, 16, 1.5, True, None, 64, 'fast']",
                fptr(0x1000), fptr(0x1004), 17, std::int64_t{16}, 1.5, true, std::nullopt, 64, "fast");
}

TEST(Specialization, IntegerEqualToOneBecomesConstexpr) {
  EXPECT_PARITY("plain", "[P(0x1000,'float32'), P(0x1000,'float32'), 1, 0, 2.0, False, None, 1, 1]", fptr(0x1000),
                fptr(0x1000), std::uint8_t{1}, 0, 2.0f, false, nullptr, 1, 1);
}

TEST(Specialization, IntegerTypeFollowsValueNotCppType) {
  EXPECT_PARITY("plain", "[P(16,'float32'), P(32,'float32'), 2**31, -2**31, 0.25, True, None, 8, 0]", fptr(16),
                fptr(32), std::int64_t{1} << 31, std::int64_t{-(std::int64_t{1} << 31)}, 0.25, true, std::nullopt, 8,
                0);
  EXPECT_PARITY("plain", "[P(16,'float32'), P(32,'float32'), 2**63, 2**64-1, 1.0, True, None, 8, 0]", fptr(16),
                fptr(32), std::uint64_t{1} << 63, std::numeric_limits<std::uint64_t>::max(), 1.0, true, std::nullopt, 8,
                0);
  EXPECT_PARITY("plain", "[P(16,'float32'), P(32,'float32'), -2**63, 2**31-1, 1.0, True, None, 8, 0]", fptr(16),
                fptr(32), std::numeric_limits<std::int64_t>::min(), std::int32_t{2147483647}, 1.0, true, std::nullopt,
                8, 0);
  EXPECT_PARITY("plain", "[P(16,'float32'), P(32,'float32'), 255, -1, 1.0, True, None, 8, 0]", fptr(16), fptr(32),
                std::uint8_t{255}, std::int8_t{-1}, 1.0, true, std::nullopt, 8, 0);
  EXPECT_PARITY("plain", "[P(16,'float32'), P(32,'float32'), 4294967295, -17, 1.0, True, None, 8, 0]", fptr(16),
                fptr(32), std::uint32_t{4294967295u}, std::int16_t{-17}, 1.0, true, std::nullopt, 8, 0);
}

TEST(Specialization, ConstexprValuesKeepTheirPythonType) {
  EXPECT_PARITY("plain", "[P(16,'float32'), P(32,'float32'), 5, 6, 1.0, True, None, True, 1.0]", fptr(16), fptr(32), 5,
                6, 1.0, true, std::nullopt, true, 1.0);
  EXPECT_PARITY("plain", "[P(16,'float32'), P(32,'float32'), 5, 6, 1.0, True, None, 0.1, 1e20]", fptr(16), fptr(32), 5,
                6, 1.0, true, std::nullopt, 0.1, 1e20);
  EXPECT_PARITY("plain", "[P(16,'float32'), P(32,'float32'), 5, 6, 1.0, True, None, tl.bfloat16, None]", fptr(16),
                fptr(32), 5, 6, 1.0, true, std::nullopt, DType::bf16, nullptr);
  EXPECT_PARITY("plain", "[P(16,'float32'), P(32,'float32'), 5, 6, 1.0, True, None, 'it''s', -3]", fptr(16), fptr(32),
                5, 6, 1.0, true, std::nullopt, std::string("its"), -3);
}

TEST(Specialization, EveryPointerElementType) {
  for (int i = 0; i < kDTypeCount; ++i) {
    const auto t = static_cast<DType>(i);
    const std::string name(language_name(t));
    EXPECT_PARITY("plain", "[P(64,'" + name + "'), P(72,'" + name + "'), 5, 6, 1.0, True, None, 8, 0]", dptr(64, t),
                  dptr(72, t), 5, 6, 1.0, true, std::nullopt, 8, 0);
  }
  EXPECT_PARITY("plain", "[P(64,'int1'), P(64,'int64'), 5, 6, 1.0, True, None, 8, 0]", reinterpret_cast<bool*>(64),
                reinterpret_cast<long long*>(64), 5, 6, 1.0, true, std::nullopt, 8, 0);
}

// A C array (managed memory, say) passes its address as its element pointer, const or not.
TEST(Specialization, ArraysPassTheirAddress) {
  alignas(16) static float data[16];
  alignas(16) static const float constant[16] = {};
  char name[5] = "fast";
  const auto address = [](const void* p) { return std::to_string(reinterpret_cast<std::uintptr_t>(p)); };
  EXPECT_PARITY("plain",
                "[P(" + address(data) + ",'float32'), P(" + address(constant) + ",'float32'), 5, 6, 1.0, True, None, "
                "8, 'fast']",
                data, constant, 5, 6, 1.0, true, std::nullopt, 8, name);
}

TEST(Specialization, AnnotationsFixTheType) {
  EXPECT_PARITY("annotated", "[P(16,'float16'), P(36,'float32'), 5, 1, 16, 2.5, True, 32]", dptr(16, DType::fp16),
                fptr(36), 5, 1, 16u, 2.5, true, 32);
  EXPECT_PARITY("annotated", "[P(16,'float16'), P(32,'float32'), 2**40, -7, 0, 3, False, 32]", dptr(16, DType::fp16),
                fptr(32), std::int64_t{1} << 40, -7, 0, 3, false, 32);
}

TEST(Specialization, DoNotSpecializeByNameAndIndex) {
  EXPECT_PARITY("unspecialized", "[P(16,'float32'), P(16,'float32'), 16, 1, 32, 64]", fptr(16), fptr(16), 16, 1, 32,
                64);
  EXPECT_PARITY("unspecialized", "[P(20,'float32'), P(20,'float32'), 1, 17, 1, 64]", fptr(20), fptr(20), 1, 17, 1, 64);
}

TEST(Specialization, PythonDefaultsFillOmittedArguments) {
  EXPECT_PARITY("with_defaults", "[P(16,'float32'), 100]", fptr(16), 100);
  EXPECT_PARITY("with_defaults", "[P(16,'float32'), 100, 64, 2.0, 'gelu', False, 3, 1]", fptr(16), 100, 64, 2.0, "gelu",
                false, 3, 1);
  EXPECT_PARITY("with_defaults", "[P(16,'float32'), 100, 64, 2.0, 'gelu', False, 3, 1, tl.bfloat16]", fptr(16), 100, 64,
                2.0, "gelu", false, 3, 1, DType::bf16);
}

TEST(Specialization, ExplicitScalarTypeBehavesLikeAnAnnotation) {
  auto& fn = JitFunction::get(kSig, "plain");
  const auto spec = fn.specialize(fptr(16), fptr(16), scalar(DType::i64, 16), scalar(DType::fp64, 1),
                                  scalar(DType::fp16, 0.5), scalar(DType::u8, 1), 5, 8, 0);
  EXPECT_EQ(spec.params[2].type, "i64");
  EXPECT_EQ(spec.params[2].key, ParamSpec::Key::divisible);
  EXPECT_EQ(spec.params[3].type, "fp64");
  EXPECT_EQ(spec.params[3].key, ParamSpec::Key::none);
  EXPECT_EQ(spec.params[4].type, "fp16");
  EXPECT_EQ(spec.params[5].type, "u8");
  EXPECT_EQ(spec.params[5].key, ParamSpec::Key::one);
  EXPECT_EQ(spec.params[6].type, "i32");  // a plain int for `maybe`
}

}  // namespace
}  // namespace tritonrt::test

// Every failure is a typed exception naming the kernel, the parameter, and what was
// expected versus given.

#include <gtest/gtest.h>

#include <cstdint>

#include "reference.h"

namespace tritonrt::test {
namespace {

const std::string kSig = kKernels + "/signatures.py";
float* fptr(std::uintptr_t a) { return reinterpret_cast<float*>(a); }

template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception type: ") + e.what();
  }
  return "no exception";
}

#define EXPECT_ERROR(type, expr, ...)                                                               \
  do {                                                                                              \
    const std::string msg_ = message_of<type>([&] { (void)(expr); });                               \
    for (const char* part_ : {__VA_ARGS__}) EXPECT_NE(msg_.find(part_), std::string::npos) << msg_; \
  } while (0)

TEST(Errors, FileNotFound) {
  EXPECT_ERROR(SourceError, JitFunction::get(kKernels + "/missing.py", "k"), "missing.py", "does not exist");
}

TEST(Errors, ModuleNotFound) {
  EXPECT_ERROR(SourceError, JitFunction::get("no_such_package.kernels", "k"), "no_such_package.kernels", "not found");
}

TEST(Errors, NameNotFound) { EXPECT_ERROR(SourceError, JitFunction::get(kSig, "nope"), "'nope'", "no attribute"); }

TEST(Errors, NotAJitFunction) {
  EXPECT_ERROR(SourceError, JitFunction::get(kSig, "not_a_kernel"), "not_a_kernel",
               "is a function: neither a @triton.jit function nor a wrapper holding one in .fn");
}

TEST(Errors, SyntaxErrorInKernelFile) {
  EXPECT_ERROR(SourceError, JitFunction::get(kKernels + "/syntax_error.py", "broken"), "syntax error",
               "syntax_error.py");
}

TEST(Errors, ImportErrorInKernelFile) {
  EXPECT_ERROR(SourceError, JitFunction::get(kKernels + "/import_error.py", "k"), "a_module_that_does_not_exist");
}

TEST(Errors, WrongNumberOfArguments) {
  auto& fn = JitFunction::get(kSig, "plain");
  EXPECT_ERROR(ArgumentError, fn.specialize(fptr(16), fptr(16), 1, 2, 3.0, true, nullptr, 8, 0, 99), "'plain'",
               "takes 9 arguments, 10 were given");
  EXPECT_ERROR(ArgumentError, fn.specialize(fptr(16), fptr(16), 1), "'plain'", "parameter 'm'", "missing argument");
}

TEST(Errors, PointerForConstexpr) {
  auto& fn = JitFunction::get(kSig, "plain");
  EXPECT_ERROR(ArgumentError, fn.specialize(fptr(16), fptr(16), 1, 2, 3.0, true, nullptr, fptr(16), 0), "'plain'",
               "parameter 'BLOCK'", "tl.constexpr", "got a device pointer");
}

TEST(Errors, ValueThatFitsNoType) {
  auto& fn = JitFunction::get(kSig, "plain");
  EXPECT_ERROR(
      ArgumentError,
      fn.specialize(fptr(16), fptr(16), scalar(DType::i32, std::int64_t{1} << 40), 2, 3.0, true, nullptr, 8, 0),
      "parameter 'n'", "1099511627776 does not fit type i32");
  EXPECT_ERROR(ArgumentError, fn.specialize(fptr(16), fptr(16), scalar(DType::u8, -1), 2, 3.0, true, nullptr, 8, 0),
               "-1 does not fit type u8");
  EXPECT_ERROR(ArgumentError, fn.specialize(fptr(16), fptr(16), 1, 2, 1e300, true, nullptr, 8, 0), "parameter 'f'",
               "overflows fp32");
  auto& annotated = JitFunction::get(kSig, "annotated");
  EXPECT_ERROR(ArgumentError, annotated.specialize(fptr(16), fptr(16), 5, std::int64_t{1} << 33, 16u, 2.5, true, 32),
               "'annotated'", "parameter 'i'", "does not fit type i32");
  EXPECT_ERROR(ArgumentError, annotated.specialize(fptr(16), fptr(16), 5, 1, -1, 2.5, true, 32), "parameter 'u'",
               "-1 does not fit type u32");
}

TEST(Errors, WrongKindForParameter) {
  auto& fn = JitFunction::get(kSig, "plain");
  EXPECT_ERROR(ArgumentError, fn.specialize(fptr(16), "text", 1, 2, 3.0, true, nullptr, 8, 0), "parameter 'q'",
               "only tl.constexpr parameters take strings");
  EXPECT_ERROR(ArgumentError, fn.specialize(fptr(16), DType::fp16, 1, 2, 3.0, true, nullptr, 8, 0), "parameter 'q'",
               "only tl.constexpr parameters take dtypes");
  auto& annotated = JitFunction::get(kSig, "annotated");
  EXPECT_ERROR(ArgumentError, annotated.specialize(5, fptr(16), 5, 1, 1u, 2.5, true, 32), "parameter 'p'",
               "expected a device pointer for type *fp16, got an integer");
}

TEST(Errors, AutotunedKernelsTuneOnAGpuOnly) {
  auto& fn = JitFunction::get(kSig, "tuned");
  ASSERT_EQ(fn.signature().decorators.size(), 1u);
  EXPECT_EQ(fn.signature().decorators[0].configs, 2u);
  EXPECT_ERROR(ArgumentError, fn.specialize(fptr(16), 100), "'tuned'", "autotuned", "compile_configs");
  EXPECT_ERROR(ArgumentError, fn.specialize(fptr(16), 100, 64), "'tuned'",
               "takes 2 arguments (its decorators set 1 more)", "JitFunction::get(source, \"tuned.fn\")");
  // What the hint says works: the kernel under its decorator takes BLOCK from the call.
  EXPECT_EQ(JitFunction::get(kSig, "tuned.fn").specialize(fptr(16), 100, 64).params[2].value, "64");
}

TEST(Errors, TritonCompileErrorIsCarriedThrough) {
  auto& fn = JitFunction::get(kSig, "bad_arange");
  EXPECT_ERROR(CompileError, fn.compile(Target::parse("cuda:90"), {}, fptr(16), 4), "bad_arange", "cuda:90",
               "power of 2");
}

TEST(Errors, UnknownTarget) {
  EXPECT_ERROR(TargetError, Target::parse("tpu:4"), "tpu:4", "unknown backend");
  EXPECT_ERROR(TargetError, Target::parse("cuda"), "BACKEND:ARCH");
  EXPECT_ERROR(TargetError, Target::parse("cuda:sm90"), "compute capability");
  auto& fn = JitFunction::get(kSig, "plain");
  EXPECT_ERROR(TargetError,
               fn.compile(Target::parse("cuda:12345"), {}, fptr(16), fptr(16), 5, 2, 3.0, true, nullptr, 8, 0), "12345",
               "not supported");
}

}  // namespace
}  // namespace tritonrt::test

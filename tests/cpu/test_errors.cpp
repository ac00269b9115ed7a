// Every failure is a typed exception naming the kernel, the parameter, and what was
// expected versus given. Triton's compile errors and a kernel module's import errors keep
// their layout: what() is tritonrt's one-line summary, then Triton's text line by line with
// its caret under the column it points at, or the module's traceback with file and line.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "reference.h"

namespace tritonrt::test {
namespace {

const std::string kSig = kKernels + "/signatures.py";
const std::string kLayout = kKernels + "/error_layout.py";
const std::string kImport = kKernels + "/error_layout_import.py";
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

// --- the layout of long errors ----------------------------------------------------------------

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The column the caret on the line after the source line holding `code` points at, against
// the column `code` starts at there; -1s when the lines are not found.
std::pair<long, long> caret_and_code(const std::vector<std::string>& lines, const std::string& code) {
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    const auto at = lines[i].find(code);
    if (at == std::string::npos) continue;
    const auto caret = lines[i + 1].find('^');
    if (caret == std::string::npos || lines[i + 1].find_first_not_of(" ^") != std::string::npos) return {-1, -1};
    return {static_cast<long>(caret), static_cast<long>(at)};
  }
  return {-1, -1};
}

TEST(ErrorLayout, CompileErrorKeepsTritonsLinesAndCaret) {
  auto& fn = JitFunction::get(kLayout, "undefined_name");
  const std::string message = message_of<CompileError>([&] { fn.compile(Target::parse("cuda:90"), {}, fptr(16), 4); });
  const auto lines = lines_of(message);
  ASSERT_GE(lines.size(), 4u) << message;
  // The summary alone on the first line, as before: where, what, why.
  EXPECT_TRUE(lines[0].starts_with("tritonrt: kernel 'undefined_name': compiling for cuda:90: CompilationError: at 3:"))
      << message;
  EXPECT_NE(lines[0].find("no_such_name is not defined"), std::string::npos) << message;
  EXPECT_EQ(lines[0].find("tl.store"), std::string::npos) << "the summary repeats the source: " << message;
  // Triton's text once, as Triton writes it: the caret under the undefined name.
  EXPECT_EQ(count(message, "tl.store(x_ptr + offs,       no_such_name"), 1u) << message;
  const auto [caret, code] = caret_and_code(lines, "tl.store(x_ptr + offs,       no_such_name");
  ASSERT_NE(caret, -1) << message;
  EXPECT_EQ(caret, code + static_cast<long>(std::string("tl.store(x_ptr + offs,       ").size())) << message;
}

TEST(ErrorLayout, ErrorInACalledFunctionShowsBothPlacesAndTheReason) {
  auto& fn = JitFunction::get(kLayout, "calls_a_broken_helper");
  const std::string message = message_of<CompileError>([&] { fn.compile(Target::parse("cuda:90"), {}, fptr(16), 4); });
  const auto lines = lines_of(message);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("CompilationError: arange's range must be a power of 2"), std::string::npos) << message;
  const auto [inner_caret, inner] = caret_and_code(lines, "return tl.arange(0, 3)");
  EXPECT_EQ(inner_caret, inner + 7) << message;  // under tl.arange
  const auto [outer_caret, outer] = caret_and_code(lines, "offs = _odd_range(x_ptr)");
  EXPECT_EQ(outer_caret, outer + 7) << message;  // under the call
}

TEST(ErrorLayout, ImportErrorShowsTheModulesTraceback) {
  const std::string message = message_of<SourceError>([&] { JitFunction::get(kImport, "kernel"); });
  const auto lines = lines_of(message);
  ASSERT_GE(lines.size(), 3u) << message;
  EXPECT_NE(lines[0].find("failed: ZeroDivisionError: division by zero"), std::string::npos) << message;
  EXPECT_EQ(lines[1], "Traceback (most recent call last):") << message;
  EXPECT_NE(message.find("File \"" + kImport + "\", line 10, in <module>"), std::string::npos) << message;
  EXPECT_NE(message.find("File \"" + kImport + "\", line 7, in _scale"), std::string::npos) << message;
  EXPECT_EQ(lines.back(), "ZeroDivisionError: division by zero") << message;
  // Only the user's frames: none of tritonrt's bridge or of the import system.
  EXPECT_EQ(count(message, "File \""), 2u) << message;
}

}  // namespace
}  // namespace tritonrt::test

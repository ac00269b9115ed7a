// Triton's compile errors and a kernel module's import errors keep their layout through the
// C++ API: what() is tritonrt's one-line summary, then Triton's text line by line with its
// caret under the column it points at, or the module's traceback with file and line.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "reference.h"

namespace tritonrt::test {
namespace {

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

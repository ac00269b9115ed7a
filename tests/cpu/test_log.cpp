// The log as a program sees it through include/tritonrt/log.h: the level set in C++ (over
// TRITONRT_LOG), and a handler that receives each message instead of stderr.

#include <gtest/gtest.h>

#include <cstdint>
#include <mutex>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference.h"
#include "tritonrt/log.h"

namespace tritonrt::test {
namespace {

const std::string kSig = kKernels + "/signatures.py";

// Collects what the log reports while it lives; the level and stderr come back after.
class CapturedLog {
 public:
  explicit CapturedLog(LogLevel level) : before_(log_level()) {
    set_log_level(level);
    set_log_handler([this](LogLevel level, std::string_view message) {
      std::lock_guard lock(mutex_);
      lines_.emplace_back(level, message);
    });
  }
  ~CapturedLog() {
    set_log_handler(nullptr);
    set_log_level(before_);
  }
  std::vector<std::pair<LogLevel, std::string>> lines() {
    std::lock_guard lock(mutex_);
    return lines_;
  }

 private:
  LogLevel before_;
  std::mutex mutex_;
  std::vector<std::pair<LogLevel, std::string>> lines_;
};

// A call not compiled before in this process (num_warps differs per test).
void compile_plain(int num_warps) {
  auto* p = reinterpret_cast<float*>(std::uintptr_t{16});
  JitFunction::get(kSig, "plain")
      .compile(Target::parse("cuda:90"), {.num_warps = num_warps}, p, p, 1000, 7, 0.5, true, std::nullopt, 64, 0);
}

TEST(Log, InfoReportsACompileWithItsDurationToTheHandler) {
  CapturedLog log(LogLevel::info);
  compile_plain(2);
  const std::regex compiled(
      R"(kernel 'plain': compiling for cuda:90: took \d+\.\d ms \(Triton( compiled it|'s cache had it)\))");
  bool found = false;
  std::string all;
  for (const auto& [level, message] : log.lines()) {
    all += "\n  " + message;
    EXPECT_EQ(level, LogLevel::info) << message;
    EXPECT_EQ(message.find("tritonrt:"), std::string::npos) << "the handler gets no prefix: " << message;
    found = found || std::regex_match(message, compiled);
  }
  EXPECT_TRUE(found) << "no compile line among:" << all;
}

TEST(Log, LevelSetInCodeSilencesInfo) {
  CapturedLog log(LogLevel::warning);
  compile_plain(1);
  for (const auto& [level, message] : log.lines()) EXPECT_EQ(level, LogLevel::warning) << message;
  EXPECT_EQ(log_level(), LogLevel::warning);
}

TEST(Log, AHandlerThatThrowsCostsOnlyItsMessages) {
  const LogLevel before = log_level();
  set_log_level(LogLevel::info);
  set_log_handler([](LogLevel, std::string_view) { throw std::runtime_error("the handler failed"); });
  testing::internal::CaptureStderr();
  EXPECT_NO_THROW(compile_plain(8));
  const std::string stderr_text = testing::internal::GetCapturedStderr();
  set_log_handler(nullptr);
  set_log_level(before);
  // What the handler could not take went to stderr instead.
  EXPECT_NE(stderr_text.find("tritonrt: info: kernel 'plain': compiling for cuda:90: took"), std::string::npos)
      << stderr_text;
}

}  // namespace
}  // namespace tritonrt::test

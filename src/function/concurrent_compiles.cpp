#include "function/concurrent_compiles.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <string_view>
#include <system_error>
#include <thread>

#include "common/errors.h"
#include "compiler/compiler.h"

namespace tritonrt::detail {

std::size_t compile_threads() {
  if (const char* text = std::getenv("TRITONRT_COMPILE_THREADS"); text != nullptr && *text != '\0') {
    const std::string_view value(text);
    std::size_t threads = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), threads);
    if (error != std::errc() || end != value.data() + value.size() || threads == 0 || threads > 1024) {
      raise<ArgumentError>({}, "TRITONRT_COMPILE_THREADS must be a whole number from 1 to 1024, got '{}'", value);
    }
    return threads;
  }
  cpu_set_t allowed;
  if (::sched_getaffinity(0, sizeof(allowed), &allowed) == 0) return std::max(1, CPU_COUNT(&allowed));
  return std::max(1u, std::thread::hardware_concurrency());
}

std::vector<std::exception_ptr> run_concurrently(std::size_t n, const std::function<void(std::size_t)>& job) {
  std::vector<std::exception_ptr> errors(n);
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        job(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const std::size_t threads = std::min(n, compile_threads());
  GilReleased unlocked;  // the jobs take the GIL in turn to compile
  std::vector<std::thread> helpers;
  helpers.reserve(threads > 0 ? threads - 1 : 0);
  for (std::size_t t = 1; t < threads; ++t) {
    try {
      helpers.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no more threads to be had: those running (this one at least) do the rest
    }
  }
  work();
  for (auto& h : helpers) h.join();
  return errors;
}

}  // namespace tritonrt::detail

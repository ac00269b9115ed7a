#include "launch/benchmark.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "driver/driver.h"

namespace tritonrt::detail {
namespace {

// Triton's get_empty_cache_for_benchmark: 256 MiB of int32, zeroed to evict the L2.
constexpr std::size_t kFlushWords = 256u * 1024 * 1024 / 4;

// Linear interpolation between the closest ranks, as triton.testing._quantile.
double quantile(std::vector<double> sorted, double q) {
  const double point = q * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(point));
  const auto upper = static_cast<std::size_t>(std::ceil(point));
  const double t = point - static_cast<double>(lower);
  return (1 - t) * sorted[lower] + t * sorted[upper];
}

class Event {
 public:
  Event() { TRITONRT_CU_CHECK(Driver::get(), cuEventCreate(&event_, CU_EVENT_DEFAULT), "creating a timing event"); }
  ~Event() { (void)Driver::get().cuEventDestroy(event_); }
  Event(Event&& other) noexcept : event_(other.event_) { other.event_ = nullptr; }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(CUstream stream) {
    TRITONRT_CU_CHECK(Driver::get(), cuEventRecord(event_, stream), "recording a timing event");
  }
  // Milliseconds from this event to `end`.
  double until(const Event& end) const {
    float ms = 0;
    TRITONRT_CU_CHECK(Driver::get(), cuEventElapsedTime(&ms, event_, end.event_), "reading a timing event");
    return ms;
  }

 private:
  CUevent event_ = nullptr;
};

class FlushBuffer {
 public:
  explicit FlushBuffer(CUstream stream) : stream_(stream) {
    TRITONRT_CU_CHECK(Driver::get(), cuMemAllocAsync(&buffer_, kFlushWords * 4, stream),
                      "allocating the 256 MiB that flush the L2 cache between timed runs");
  }
  ~FlushBuffer() { (void)Driver::get().cuMemFreeAsync(buffer_, stream_); }
  FlushBuffer(const FlushBuffer&) = delete;
  FlushBuffer& operator=(const FlushBuffer&) = delete;
  void flush() {
    TRITONRT_CU_CHECK(Driver::get(), cuMemsetD32Async(buffer_, 0, kFlushWords, stream_), "flushing the L2 cache");
  }

 private:
  CUstream stream_;
  CUdeviceptr buffer_ = 0;
};

}  // namespace

std::array<double, 3> benchmark(const std::function<void()>& run, void* stream_handle, double warmup_ms,
                                double rep_ms) {
  auto& d = Driver::get();
  const auto stream = static_cast<CUstream>(stream_handle);
  auto sync = [&] { TRITONRT_CU_CHECK(d, cuStreamSynchronize(stream), "waiting for a timed run"); };
  run();
  sync();
  FlushBuffer cache(stream);
  Event start, end;
  start.record(stream);
  for (int i = 0; i < 5; ++i) {
    cache.flush();
    run();
  }
  end.record(stream);
  sync();
  // A run too short for the event clock would make the counts below unbounded (Triton
  // divides by zero there): count it as a microsecond.
  const double estimate_ms = std::max(start.until(end) / 5, 1e-3);
  const int warmups = std::max(1, static_cast<int>(warmup_ms / estimate_ms));
  const int repeats = std::max(1, static_cast<int>(rep_ms / estimate_ms));
  std::vector<Event> starts(static_cast<std::size_t>(repeats)), ends(static_cast<std::size_t>(repeats));
  for (int i = 0; i < warmups; ++i) run();
  for (int i = 0; i < repeats; ++i) {
    cache.flush();
    starts[static_cast<std::size_t>(i)].record(stream);
    run();
    ends[static_cast<std::size_t>(i)].record(stream);
  }
  sync();
  std::vector<double> times(static_cast<std::size_t>(repeats));
  for (std::size_t i = 0; i < times.size(); ++i) times[i] = starts[i].until(ends[i]);
  std::sort(times.begin(), times.end());
  return {quantile(times, 0.5), quantile(times, 0.2), quantile(times, 0.8)};
}

}  // namespace tritonrt::detail

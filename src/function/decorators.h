// What a kernel's decorators remember between calls, per device context: each heuristic's
// values, memoized on what it read, and each autotuner's choice per tuning key. Both are
// read without a lock (published, immutable lists); adding to them is rare and locked.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "common/published.h"
#include "compiler/compiler.h"

namespace tritonrt::detail {

/// One memoized heuristic value: each input it read with what it found, and its value.
struct MemoEntry {
  struct Read {
    std::size_t param;
    Facet facet;
    Arg found;                       ///< value, present (as boolean), dtype, address, device
    std::vector<std::int64_t> dims;  ///< shape or strides
  };
  std::vector<Read> reads;
  Arg value;
  std::deque<std::string> strings;  ///< behind string values above
};

/// One tuning key's choice.
struct TuningEntry {
  std::uint64_t hash = 0;
  std::vector<Arg> key;
  std::deque<std::string> strings;  ///< behind string values in the key
  std::size_t config = 0;
};

/// The decorators' memory for one device context (or for explicit targets).
struct DecoratorState {
  explicit DecoratorState(const LoadedKernel& kernel);

  std::mutex mutex;                                                         ///< serializes adds and the in-flight map
  std::vector<PublishedList<const MemoEntry>> memos;                        ///< per heuristic, over all layers in order
  std::vector<PublishedList<const TuningEntry>> tunings;                    ///< per layer (autotune layers use theirs)
  std::map<std::string, std::shared_future<std::size_t>> tuning_in_flight;  ///< per layer and key
};

}  // namespace tritonrt::detail

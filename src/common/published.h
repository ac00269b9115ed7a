// Data read without a lock on the hot path, changed rarely: each change publishes a new,
// immutable snapshot with one atomic store, and earlier snapshots stay alive (a reader may
// still hold one) until the owner dies. Changes are serialized by the caller.
#pragma once

#include <atomic>
#include <memory>
#include <span>
#include <vector>

namespace tritonrt::detail {

/// The current snapshot of a T, published atomically.
template <class T>
class Published {
 public:
  /// The latest snapshot, or nullptr before the first; lock-free.
  [[gnu::always_inline]] const T* current() const noexcept { return current_.load(std::memory_order_acquire); }
  /// Makes `next` the current snapshot (the caller serializes publishers).
  const T& publish(std::unique_ptr<const T> next) {
    const T& published = *next;
    current_.store(next.get(), std::memory_order_release);
    snapshots_.push_back(std::move(next));
    return published;
  }

 private:
  std::atomic<const T*> current_{nullptr};
  std::vector<std::unique_ptr<const T>> snapshots_;
};

/// Entries owned here and listed in a published snapshot: readers walk entries() without a
/// lock, add() publishes the list with one more (the caller serializes adds).
template <class Entry>
class PublishedList {
 public:
  [[gnu::always_inline]] std::span<Entry* const> entries() const noexcept {
    const auto* list = list_.current();
    return list == nullptr ? std::span<Entry* const>() : std::span<Entry* const>(*list);
  }
  Entry& add(std::unique_ptr<Entry> entry) {
    Entry& added = *entry;
    owned_.push_back(std::move(entry));
    auto list = std::make_unique<std::vector<Entry*>>();
    for (const auto& e : owned_) list->push_back(e.get());
    list_.publish(std::move(list));
    return added;
  }

 private:
  Published<std::vector<Entry*>> list_;
  std::vector<std::unique_ptr<Entry>> owned_;
};

}  // namespace tritonrt::detail

// Data read without a lock on the hot path, changed rarely: each change publishes a new,
// immutable snapshot with one atomic store, and earlier snapshots stay alive (a reader may
// still hold one) until the owner dies. Changes are serialized by the caller.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
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

/// Entries owned here and found by a hash without a lock, for sets that grow large (a
/// heuristic's values over every input seen): an open-addressing table whose slots are filled
/// in place, so an add costs no copy of the set; it is rebuilt twice as large (and published)
/// when half full, which keeps every table ever published at most twice the entries. Readers
/// holding an older table miss only what was added since. The caller serializes adds.
template <class Entry>
class PublishedTable {
 public:
  /// The first entry added under `hash` for which `match(entry)` holds, or nullptr; lock-free.
  template <class Match>
  Entry* find(std::uint64_t hash, Match&& match) const {
    const Slots* table = table_.current();
    if (table == nullptr) return nullptr;
    for (std::size_t i = spread(hash) & table->mask;; i = (i + 1) & table->mask) {
      Entry* entry = table->slots[i].entry.load(std::memory_order_acquire);
      if (entry == nullptr) return nullptr;  // at most half full: every probe ends at an empty slot
      if (table->slots[i].hash.load(std::memory_order_relaxed) == hash && match(*entry)) return entry;
    }
  }
  /// Adds `entry` under `hash`.
  Entry& add(std::uint64_t hash, std::unique_ptr<Entry> entry) {
    Entry& added = *entry;
    owned_.push_back({hash, std::move(entry)});
    const Slots* table = table_.current();
    if (table == nullptr || owned_.size() * 2 > table->mask + 1) {
      auto grown = std::make_unique<Slots>(table == nullptr ? 16 : 2 * (table->mask + 1));
      for (const auto& [h, e] : owned_) grown->put(h, e.get());
      table_.publish(std::move(grown));
    } else {
      table->put(hash, &added);
    }
    return added;
  }
  std::size_t size() const noexcept { return owned_.size(); }

 private:
  struct Slot {
    std::atomic<std::uint64_t> hash{0};
    std::atomic<Entry*> entry{nullptr};
  };
  struct Slots {
    explicit Slots(std::size_t capacity) : mask(capacity - 1), slots(new Slot[capacity]) {}
    // Filled in place: the hash first, then the entry that makes the slot visible.
    void put(std::uint64_t hash, Entry* entry) const {
      std::size_t i = spread(hash) & mask;
      while (slots[i].entry.load(std::memory_order_relaxed) != nullptr) i = (i + 1) & mask;
      slots[i].hash.store(hash, std::memory_order_relaxed);
      slots[i].entry.store(entry, std::memory_order_release);
    }
    std::size_t mask;
    std::unique_ptr<Slot[]> slots;
  };
  // Hashes folded multiplicatively keep their low bits' patterns (multiples of 4096 share
  // them): mixed through before they pick a slot.
  static std::size_t spread(std::uint64_t h) noexcept {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return static_cast<std::size_t>(h);
  }

  Published<Slots> table_;
  std::vector<std::pair<std::uint64_t, std::unique_ptr<Entry>>> owned_;
};

}  // namespace tritonrt::detail

#include "launch/kernel_table.h"

namespace tritonrt::detail {

namespace {

// `a` with what it points at (a string's text, a tuple's elements) copied into the entry.
Arg owned(const Arg& a, std::deque<std::string>& strings, std::deque<Arg>& elements) {
  Arg copy = a;
  if (a.kind == ArgKind::string) {
    const std::string& text = strings.emplace_back(a.value.s, a.size);
    copy.value.s = text.data();
  } else if (a.kind == ArgKind::tuple) {
    // The elements side by side (deque appends never move the ones before), then theirs.
    const auto given = a.elements();
    const std::size_t first = elements.size();
    for (const Arg& e : given) elements.push_back(e);
    for (std::size_t i = 0; i < given.size(); ++i) elements[first + i] = owned(given[i], strings, elements);
    copy.object = given.empty() ? nullptr : &elements[first];
  }
  return copy;
}

}  // namespace

CacheEntry::CacheEntry(std::uint64_t h, CallCodes call, std::span<const Arg> args, const OptionsKey& call_options,
                       ModuleFunction loaded)
    : hash(h),
      codes(call.params.begin(), call.params.end()),
      tuple_codes(call.tuples.begin(), call.tuples.end()),
      constexprs(args.begin(), args.end()),
      options(call_options),
      kernel(std::move(loaded)) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (codes[i].type != TypeCode::kConstexpr && !TypeCode::is_descriptor(codes[i].type)) continue;
    constexpr_indices.push_back(static_cast<std::uint16_t>(i));
    Arg& a = constexprs[i];
    if (a.kind == ArgKind::descriptor) {
      if (descriptors.empty()) descriptors.resize(args.size());  // once: the copies never move
      descriptors[i].emplace(*static_cast<const TensorDescriptor*>(a.object));
      a.object = &*descriptors[i];
    } else {
      a = owned(a, strings, elements);
    }
  }
}

const CacheEntry* KernelTable::find(std::uint64_t hash, CallCodes codes, std::span<const Arg> args,
                                    const OptionsKey& options) const noexcept {
  const Slots* t = table_.current();
  if (t == nullptr) return nullptr;
  const std::size_t mask = t->slots.size() - 1;
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    const CacheEntry* e = t->slots[i];
    if (e == nullptr) return nullptr;
    if (e->hash == hash && e->matches(codes, args, options)) return e;
  }
}

const CacheEntry& KernelTable::insert(std::unique_ptr<CacheEntry> added) {
  const CacheEntry& ref = *added;
  entries_.push_back(std::move(added));
  std::size_t capacity = 8;
  while (capacity < 2 * entries_.size()) capacity *= 2;
  auto next = std::make_unique<Slots>();
  next->slots.assign(capacity, nullptr);
  for (const auto& e : entries_) {
    std::size_t i = e->hash & (capacity - 1);
    while (next->slots[i] != nullptr) i = (i + 1) & (capacity - 1);
    next->slots[i] = e.get();
  }
  table_.publish(std::move(next));
  return ref;
}

}  // namespace tritonrt::detail

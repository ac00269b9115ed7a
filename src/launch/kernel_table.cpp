#include "launch/kernel_table.h"

namespace tritonrt::detail {

namespace {

// `a` with what it points at (a string's text, a tuple's elements, a descriptor inside a
// tuple) copied into the entry.
Arg owned(const Arg& a, CacheEntry& entry) {
  Arg copy = a;
  if (a.kind == ArgKind::string) {
    const std::string& text = entry.strings.emplace_back(a.value.s, a.size);
    copy.value.s = text.data();
  } else if (a.kind == ArgKind::descriptor) {
    copy.object = &entry.element_descriptors.emplace_back(*static_cast<const TensorDescriptor*>(a.object));
  } else if (a.kind == ArgKind::tuple) {
    // Each tuple's elements in a vector of their own: side by side, and never moved.
    std::vector<Arg> elements;
    elements.reserve(a.value.u);
    for (const Arg& e : a.elements()) elements.push_back(owned(e, entry));
    copy.object = entry.tuples.emplace_back(std::move(elements)).data();
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
    Arg& a = constexprs[i];
    if (codes[i].type == TypeCode::kTuple && holds_descriptor(a)) {
      tuple_key_indices.push_back(static_cast<std::uint16_t>(i));
      a = owned(a, *this);
      continue;
    }
    if (codes[i].type != TypeCode::kConstexpr && !TypeCode::is_descriptor(codes[i].type)) continue;
    constexpr_indices.push_back(static_cast<std::uint16_t>(i));
    if (a.kind == ArgKind::descriptor) {
      if (descriptors.empty()) descriptors.resize(args.size());  // once: the copies never move
      descriptors[i].emplace(*static_cast<const TensorDescriptor*>(a.object));
      a.object = &*descriptors[i];
    } else {
      a = owned(a, *this);
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

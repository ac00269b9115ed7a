#include "launch/kernel_table.h"

namespace tritonrt::detail {

CacheEntry::CacheEntry(std::uint64_t h, std::span<const ParamCode> call_codes, std::span<const Arg> args,
                       const OptionsKey& call_options, ModuleFunction loaded)
    : hash(h),
      codes(call_codes.begin(), call_codes.end()),
      constexprs(args.begin(), args.end()),
      strings(args.size()),
      options(call_options),
      kernel(std::move(loaded)) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (codes[i].type != TypeCode::kConstexpr && !TypeCode::is_descriptor(codes[i].type)) continue;
    constexpr_indices.push_back(static_cast<std::uint16_t>(i));
    Arg& a = constexprs[i];
    if (a.kind == ArgKind::string) {
      strings[i].assign(a.value.s, a.size);
      a.value.s = strings[i].data();
    } else if (a.kind == ArgKind::descriptor) {
      if (descriptors.empty()) descriptors.resize(args.size());  // once: the copies never move
      descriptors[i].emplace(*static_cast<const TensorDescriptor*>(a.object));
      a.object = &*descriptors[i];
    }
  }
}

const CacheEntry* KernelTable::find(std::uint64_t hash, std::span<const ParamCode> codes, std::span<const Arg> args,
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

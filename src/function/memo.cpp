#include "function/memo.h"

#include <algorithm>

#include "common/hashing.h"

namespace tritonrt::detail {

namespace {

// A read's share of a memo entry's hash: which read it is and, for an integer or a bool read
// as a value, what it found (`found`: the entry's, or the call's argument). What a hash leaves
// out (another kind of value, a dtype, a shape), still_reads compares.
std::uint64_t fold_read(std::uint64_t h, std::size_t param, Facet facet, const Arg* found) {
  h = hash_mix(h, static_cast<std::uint64_t>(param) << 8 | static_cast<std::uint64_t>(facet));
  if (found != nullptr &&
      (found->kind == ArgKind::sint || found->kind == ArgKind::uint || found->kind == ArgKind::boolean)) {
    h = hash_mix(hash_mix(h, static_cast<std::uint64_t>(found->kind)), found->value.u);
  }
  return h;
}

}  // namespace

const MemoEntry* MemoTable::find(const Arg* args, const DeviceContext* device) const {
  for (const ReadSet* set : read_sets_.entries()) {
    std::uint64_t h = hash_mix(kHashSeed, set->number);
    for (const auto& [param, facet] : set->reads) {
      h = fold_read(h, param, facet, facet == Facet::value ? &args[param] : nullptr);
    }
    const MemoEntry* found = entries_.find(h, [&](const MemoEntry& entry) { return still_reads(entry, args, device); });
    if (found != nullptr) return found;
  }
  return nullptr;
}

bool MemoTable::look_at_stored() {
  return !stored_looked_.exchange(true, std::memory_order_relaxed) || !python_side_started();
}

void MemoTable::store(const KernelDescription& kernel, const std::string& key, const std::optional<std::string>& text) {
  if (key.empty() || !text || stored_full_.load(std::memory_order_relaxed)) return;
  if (!store_memo_entry(kernel, key, *text)) stored_full_.store(true, std::memory_order_relaxed);
}

const MemoEntry& MemoTable::add(std::unique_ptr<MemoEntry> entry) {
  std::vector<std::pair<std::size_t, Facet>> reads;
  for (const auto& read : entry->reads) reads.emplace_back(read.param, read.facet);
  const ReadSet* set = nullptr;
  for (const ReadSet* known : read_sets_.entries()) {
    if (known->reads == reads) set = known;
  }
  if (set == nullptr) {
    const std::size_t number = read_sets_.entries().size();
    set = &read_sets_.add(std::make_unique<ReadSet>(ReadSet{number, std::move(reads)}));
  }
  std::uint64_t h = hash_mix(kHashSeed, set->number);
  for (const auto& read : entry->reads) {
    h = fold_read(h, read.param, read.facet, read.facet == Facet::value ? &read.found : nullptr);
  }
  return entries_.add(h, std::move(entry));
}

bool still_reads(const MemoEntry& entry, const Arg* args, const DeviceContext* device) {
  for (const auto& read : entry.reads) {
    const Arg& a = args[read.param];
    switch (read.facet) {
      case Facet::value:
        if (a.kind == ArgKind::unset || !same_value(a, read.found)) return false;
        break;
      case Facet::present:
        if ((a.kind != ArgKind::unset) != (read.found.value.u != 0)) return false;
        break;
      case Facet::dtype:
        if (a.kind != ArgKind::pointer || a.dtype != read.found.dtype || a.source != read.found.source) return false;
        break;
      case Facet::address:
        if (a.kind != ArgKind::pointer || a.value.u != read.found.value.u) return false;
        break;
      case Facet::device: {
        const int found = a.source == ArgSource::tensor ? shape_of(a).device
                                                        : (device != nullptr ? static_cast<int>(device->device) : -1);
        if (static_cast<std::int64_t>(found) != read.found.value.i) return false;
        break;
      }
      case Facet::kind:
        if (static_cast<std::uint64_t>(a.kind) != read.found.value.u) return false;
        break;
      case Facet::shape:
      case Facet::strides: {
        const TensorShape shape = shape_of(a);
        if (shape.dims < 0 || static_cast<std::size_t>(shape.dims) != read.dims.size()) return false;
        const std::int64_t* dims = read.facet == Facet::shape ? shape.sizes : shape.strides;
        if (!std::equal(read.dims.begin(), read.dims.end(), dims)) return false;
        break;
      }
    }
  }
  return true;
}

void record_reads(MemoEntry& entry, const std::vector<std::pair<std::size_t, Facet>>& reads, const Resolution& r,
                  const std::vector<TensorShape>& shapes) {
  for (const auto& [param, facet] : reads) {
    const Arg& a = r.args[param];
    MemoEntry::Read read{param, facet, {}, {}};
    switch (facet) {
      case Facet::value:
        read.found = kept(a, entry.strings);
        break;
      case Facet::present:
        read.found.value.u = a.kind != ArgKind::unset;
        break;
      case Facet::dtype:
      case Facet::address:
        read.found = a;
        break;
      case Facet::device:
        read.found.value.i = a.source == ArgSource::tensor
                                 ? shapes[param].device
                                 : (r.device != nullptr ? static_cast<int>(r.device->device) : -1);
        break;
      case Facet::shape:
        read.dims.assign(shapes[param].sizes, shapes[param].sizes + std::max(0, shapes[param].dims));
        break;
      case Facet::strides:
        read.dims.assign(shapes[param].strides, shapes[param].strides + std::max(0, shapes[param].dims));
        break;
      case Facet::kind:
        read.found.kind = ArgKind::uint;
        read.found.value.u = static_cast<std::uint64_t>(a.kind);
        break;
    }
    entry.reads.push_back(std::move(read));
  }
}

std::optional<nlohmann::json> stored_arg(const Arg& a, bool keep_address) {
  if (a.kind == ArgKind::python_default || a.kind == ArgKind::unset) return std::nullopt;
  if (a.kind == ArgKind::pointer && keep_address) return std::nullopt;  // an address: this process's
  nlohmann::json value = a.kind == ArgKind::string    ? nlohmann::json(std::string(a.value.s, a.size))
                         : a.kind == ArgKind::pointer ? nlohmann::json(0)
                                                      : nlohmann::json(a.value.u);
  return nlohmann::json::array({static_cast<int>(a.kind), std::move(value), static_cast<int>(a.dtype),
                                static_cast<int>(a.stored), static_cast<int>(a.source)});
}

std::optional<std::string> stored_text(const MemoEntry& entry, const char* field, nlohmann::json answer) {
  nlohmann::json reads = nlohmann::json::array();
  for (const auto& read : entry.reads) {
    if (read.facet == Facet::address) return std::nullopt;
    const auto found = stored_arg(read.found, read.facet == Facet::value);
    if (!found) return std::nullopt;
    reads.push_back({read.param, static_cast<int>(read.facet), *found, read.dims});
  }
  try {
    return nlohmann::json{{"reads", std::move(reads)}, {field, std::move(answer)}}.dump();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // a string that is not UTF-8: kept in this process only, not replaced by another
  }
}

namespace {

// An integer of `j` within [low, high]; anything else is an error.
int bounded(const MemoReader& read, const nlohmann::json& j, const char* what, int low, int high) {
  const int v = read.as<int>(j, what);
  if (v < low || v > high) read.fail(std::string("field '") + what + "' is out of range");
  return v;
}

}  // namespace

// The index's checksums catch damage, not a file written to deceive: every field is checked.
Arg arg_from_stored(const MemoReader& read, const nlohmann::json& j, std::deque<std::string>& strings,
                    bool pointer_allowed) {
  if (!j.is_array() || j.size() != 5) read.fail("holds an argument that is not [kind, value, dtype, stored, source]");
  Arg a;
  a.kind = static_cast<ArgKind>(bounded(read, j[0], "kind", 0, static_cast<int>(ArgKind::dtype)));
  if (a.kind == ArgKind::pointer && !pointer_allowed) read.fail("holds an address");
  if (a.kind == ArgKind::string) {
    strings.push_back(read.as<std::string>(j[1], "value"));
    a.value.s = strings.back().data();
    a.size = strings.back().size();
  } else if (a.kind != ArgKind::pointer) {
    a.value.u = read.as<std::uint64_t>(j[1], "value");
  }
  a.dtype = static_cast<DType>(bounded(read, j[2], "dtype", 0, kDTypeCount - 1));
  const auto stored = static_cast<ArgKind>(bounded(read, j[3], "stored", 0, static_cast<int>(ArgKind::unset)));
  const bool number =
      stored == ArgKind::boolean || stored == ArgKind::sint || stored == ArgKind::uint || stored == ArgKind::real;
  if (a.kind == ArgKind::typed ? !number : stored != ArgKind::none) read.fail("field 'stored' is out of range");
  a.stored = stored;
  a.source = static_cast<ArgSource>(bounded(read, j[4], "source", 0, static_cast<int>(ArgSource::tensor)));
  return a;
}

void reads_from_stored(const MemoReader& read, const nlohmann::json& reads, std::size_t params, MemoEntry& entry) {
  if (!reads.is_array()) read.fail("field 'reads' should be a list");
  for (const auto& r : reads) {
    if (!r.is_array() || r.size() != 4) read.fail("holds a read that is not [param, facet, arg, dims]");
    const auto param = read.as<std::size_t>(r[0], "param");
    const auto facet = static_cast<Facet>(bounded(read, r[1], "facet", 0, static_cast<int>(Facet::kind)));
    if (param >= params) read.fail("names a parameter the kernel does not have");
    const bool pointer_allowed = facet == Facet::dtype || facet == Facet::shape || facet == Facet::strides;
    std::vector<std::int64_t> dims;
    if (!r[3].is_array()) read.fail("holds dims that are not a list");
    for (const auto& d : r[3]) dims.push_back(read.as<std::int64_t>(d, "dims"));
    entry.reads.push_back({param, facet, arg_from_stored(read, r[2], entry.strings, pointer_allowed), std::move(dims)});
  }
}

}  // namespace tritonrt::detail

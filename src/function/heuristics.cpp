#include "function/heuristics.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/json.h"
#include "common/log.h"
#include "common/record_key.h"

namespace tritonrt::detail {
namespace {

// Whether what a memo entry's heuristic read is what it would read now.
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

// --- heuristic values kept across processes -----------------------------------------------------
//
// A memo entry that another process can use goes to tritonrt's index (and from there into
// bundles), keyed by the heuristic and the device it ran for (target and multiprocessor
// count: heuristics often size grids from the device). Its JSON form: {"reads": [[param,
// facet, arg, dims]], "value": arg}, an arg [kind, value bits or text, dtype, stored, source].

// The JSON form of `a`, or nullopt for a value that lives in this process only.
std::optional<nlohmann::json> stored_arg(const Arg& a, bool keep_address) {
  if (a.kind == ArgKind::python_default || a.kind == ArgKind::unset) return std::nullopt;
  if (a.kind == ArgKind::pointer && keep_address) return std::nullopt;  // an address: this process's
  nlohmann::json value = a.kind == ArgKind::string    ? nlohmann::json(std::string(a.value.s, a.size))
                         : a.kind == ArgKind::pointer ? nlohmann::json(0)
                                                      : nlohmann::json(a.value.u);
  return nlohmann::json::array({static_cast<int>(a.kind), std::move(value), static_cast<int>(a.dtype),
                                static_cast<int>(a.stored), static_cast<int>(a.source)});
}

std::optional<std::string> stored_form(const MemoEntry& entry) {
  nlohmann::json reads = nlohmann::json::array();
  for (const auto& read : entry.reads) {
    if (read.facet == Facet::address) return std::nullopt;
    const auto found = stored_arg(read.found, read.facet == Facet::value);
    if (!found) return std::nullopt;
    reads.push_back({read.param, static_cast<int>(read.facet), *found, read.dims});
  }
  const auto value = stored_arg(entry.value, true);
  if (!value) return std::nullopt;
  try {
    return nlohmann::json{{"reads", std::move(reads)}, {"value", *value}}.dump();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // a string that is not UTF-8: kept in this process only, not replaced by another
  }
}

using RecordReader = JsonReader<ArtifactError>;

// An integer of `j` within [low, high]; anything else is an error.
int bounded(const RecordReader& read, const nlohmann::json& j, const char* what, int low, int high) {
  const int v = read.as<int>(j, what);
  if (v < low || v > high) read.fail(std::string("field '") + what + "' is out of range");
  return v;
}

// `j` back as an Arg (strings kept in `strings`); an error on anything malformed or out of
// range (the index's checksums catch damage, not a file written to deceive). A pointer only
// where `pointer_allowed` (what a dtype, shape or strides read found): its address is not kept.
Arg arg_from(const RecordReader& read, const nlohmann::json& j, std::deque<std::string>& strings,
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

// A stored entry for a kernel of `params` parameters, or nullptr when it does not read back.
std::unique_ptr<MemoEntry> from_stored_form(const std::string& text, std::size_t params) {
  auto entry = std::make_unique<MemoEntry>();
  const RecordReader read({}, "a recorded heuristic value");
  try {
    const auto j = read.parse(text);
    const auto reads = read.field<nlohmann::json>(j, "reads");
    if (!reads.is_array()) read.fail("field 'reads' should be a list");
    for (const auto& r : reads) {
      if (!r.is_array() || r.size() != 4) read.fail("holds a read that is not [param, facet, arg, dims]");
      const auto param = read.as<std::size_t>(r[0], "param");
      const auto facet = static_cast<Facet>(bounded(read, r[1], "facet", 0, static_cast<int>(Facet::device)));
      if (param >= params) read.fail("names a parameter the kernel does not have");
      const bool pointer_allowed = facet == Facet::dtype || facet == Facet::shape || facet == Facet::strides;
      std::vector<std::int64_t> dims;
      if (!r[3].is_array()) read.fail("holds dims that are not a list");
      for (const auto& d : r[3]) dims.push_back(read.as<std::int64_t>(d, "dims"));
      entry->reads.push_back({param, facet, arg_from(read, r[2], entry->strings, pointer_allowed), std::move(dims)});
    }
    entry->value = arg_from(read, read.field<nlohmann::json>(j, "value"), entry->strings, false);
  } catch (const Error&) {
    return nullptr;
  }
  return entry;
}

// What heuristic `memo`'s stored values are found by on `device`.
std::string stored_key(std::size_t memo, const DeviceContext& device) {
  return RecordKey::heuristic(memo, device.target.str(), device.multiprocessors).text();
}

// A memo entry for the value Python computed and what it read of `r`'s arguments.
std::unique_ptr<MemoEntry> memo_entry(const HeuristicResult& result, const Resolution& r,
                                      const std::vector<TensorShape>& shapes) {
  auto entry = std::make_unique<MemoEntry>();
  entry->value = kept(result.value, entry->strings);
  if (result.value.kind == ArgKind::string) {
    entry->strings.back() = result.value_text;
    entry->value.value.s = entry->strings.back().data();
    entry->value.size = entry->strings.back().size();
  }
  for (const auto& [param, facet] : result.reads) {
    const Arg& a = r.args[param];
    MemoEntry::Read read{param, facet, {}, {}};
    switch (facet) {
      case Facet::value:
        read.found = kept(a, entry->strings);
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
    }
    entry->reads.push_back(std::move(read));
  }
  return entry;
}

}  // namespace

void Heuristics::apply(Resolution& r) const {
  const auto& layer = kernel_.layers[layer_];
  for (std::size_t h = 0; h < layer.heuristic_names.size(); ++h) {
    const Arg v = value(h, r);
    const auto& target = layer.heuristic_targets[h];
    if (target.param >= 0) {
      r.pass(static_cast<std::size_t>(target.param), v);
    } else {
      CompileOptions set;
      set_option(set, target.option, v, {kernel_.signature.name});
      merge_options(r.options, set, {kernel_.signature.name},
                    [&] { return "heuristic '" + layer.heuristic_names[h] + "'"; });
    }
  }
}

Arg Heuristics::value(std::size_t index, Resolution& r) const {
  const std::size_t memo = first_ + index;
  if (r.cpp_heuristics != nullptr && (*r.cpp_heuristics)[memo]) {
    return (*r.cpp_heuristics)[memo](BoundArgs(kernel_.signature, r.bound()));
  }
  for (const MemoEntry* entry : r.state.memos[memo].entries()) {
    if (still_reads(*entry, r.args, r.device)) return entry->value;
  }
  return miss(index, r);
}

Arg Heuristics::miss(std::size_t index, Resolution& r) const {
  const std::size_t memo = first_ + index;
  const std::string& name = kernel_.layers[layer_].heuristic_names[index];
  // A value another process (or a bundle) recorded for the same inputs and device.
  const std::string key = r.device != nullptr ? stored_key(memo, *r.device) : "";
  if (!key.empty()) {
    for (const auto& text : stored_heuristic_values(kernel_, key)) {
      auto stored = from_stored_form(text, r.count);
      if (stored && still_reads(*stored, r.args, r.device)) {
        std::lock_guard lock(r.state.mutex);
        return r.state.memos[memo].add(std::move(stored)).value;
      }
    }
  }
  std::vector<TensorShape> shapes;
  const auto args = python_args(r, shapes);
  Compiler* compiler = python_side({kernel_.signature.name},
                                   fmt::format("heuristic '{}' has no value recorded for these arguments{}", name,
                                               r.device != nullptr ? " on " + r.device->target.str() : std::string()))
                           .compiler;
  HeuristicResult result;
  {
    GilReleased unlocked;  // the interpreter may be busy on another thread
    result = parse_heuristic_result(kernel_, compiler->run_heuristic(kernel_, layer_, name, args));
  }
  auto entry = memo_entry(result, r, shapes);
  if (!result.memoizable) {
    // It read every argument: nothing to key a memo on. The value serves this call only.
    log_about(LogLevel::debug, {kernel_.signature.name},
              "heuristic '{}' reads every argument: it runs in Python on every call", name);
    return kept(entry->value, r.call_strings());
  }
  if (!key.empty()) {
    if (const auto text = stored_form(*entry)) store_heuristic_value(kernel_, key, *text);
  }
  std::lock_guard lock(r.state.mutex);
  return r.state.memos[memo].add(std::move(entry)).value;
}

}  // namespace tritonrt::detail

// Decorated calls remembered whole (ResolvedCall, decorators.h). Once each decorator of a
// launch answered from memory, the call's resolution is a function of what those answers read
// of the passed arguments (a tuner's key included) and of the call's form: how many arguments,
// of which kinds, the caller's options and config. A later launch of that form that reads the
// same there is resolved by copying the outcome: one check instead of a walk of the layers.
#include <cstring>
#include <vector>

#include "function/decorators.h"
#include "function/memo.h"

namespace tritonrt::detail {

namespace {

bool same_integers(std::span<const ResolvedCall::IntegerRead> reads, const Arg* args) {
  bool same = true;
  for (const auto& read : reads) {
    const Arg& a = args[read.param];
    same &= (a.kind == read.kind) & (a.value.u == read.bits);
  }
  return same;
}

}  // namespace

bool recall(std::span<const Arg> given, Resolution& r) {
  const auto calls = r.state.resolved.entries();
  const auto& params = r.kernel.call_params;
  const std::size_t n = given.size();
  if (calls.empty() || n > params.size()) return false;
  ArgKind kinds[kMaxParams];
  for (std::size_t i = 0; i < n; ++i) {
    r.args[params[i]] = given[i];
    kinds[i] = given[i].kind;
  }
  const OptionsKey caller(r.options);
  for (const ResolvedCall* c : calls) {
    // Its reads are of passed arguments only, bound above.
    if (c->given != n || c->chosen != r.launch->autotune_config || !(c->caller_options == caller) ||
        (n != 0 && std::memcmp(c->kinds.data(), kinds, n * sizeof(ArgKind)) != 0) ||
        !same_integers(c->integer_reads, r.args) || !still_reads(c->reads, r.args, r.device)) {
      continue;
    }
    r.count = r.kernel.signature.params.size();
    for (const auto& [param, value] : c->values) r.args[param] = value;
    r.options = c->options;
    if (!c->changes.empty()) r.reshape_descriptors(c->changes);
    return true;
  }
  return false;
}

void remember(std::span<const Arg> given, const Resolution& r) {
  if (r.ran || r.launch == nullptr || r.state.resolved.entries().size() >= DecoratorState::kMaxResolvedCalls) return;
  const auto& params = r.kernel.call_params;
  std::vector<const Arg*> passed(r.count, nullptr);  // by parameter: the caller's argument
  for (std::size_t i = 0; i < given.size(); ++i) passed[params[i]] = &given[i];
  auto call = std::make_unique<ResolvedCall>();
  call->given = given.size();
  call->chosen = r.launch->autotune_config;
  call->caller_options = OptionsKey(r.launch->options);
  for (const Arg& a : given) call->kinds.push_back(a.kind);
  // What the answers read of passed arguments. Their reads of other parameters are of values
  // the call's form and earlier answers fixed.
  auto& reads = call->reads.reads;
  const auto add = [&](const MemoEntry::Read& read) {
    const ArgKind kind = read.found.kind;
    if (read.facet == Facet::value && (kind == ArgKind::sint || kind == ArgKind::uint || kind == ArgKind::boolean)) {
      call->integer_reads.push_back({static_cast<std::uint32_t>(read.param), kind, read.found.value.u});
    } else {
      reads.push_back(read);
    }
  };
  for (std::size_t e = 0; e < r.recalled_count; ++e) {
    for (const auto& read : r.recalled[e]->reads) {
      if (passed[read.param] != nullptr) add(read);
    }
  }
  if (r.keyed) {
    // A tuner's key: the values of its key parameters, then every pointer's dtype.
    for (const auto& layer : r.kernel.layers) {
      for (const std::size_t k : layer.keys) {
        if (passed[k] != nullptr) add({k, Facet::value, kept(*passed[k], call->reads.strings), {}});
      }
    }
    for (std::size_t i = 0; i < given.size(); ++i) {
      if (given[i].kind == ArgKind::pointer) reads.push_back({params[i], Facet::dtype, given[i], {}});
    }
  }
  for (std::size_t p = 0; p < r.count; ++p) {
    const Arg& a = r.args[p];
    if (passed[p] == nullptr) {
      // A default, a config's or a memoized heuristic's value: storage that outlives the call.
      call->values.emplace_back(p, a);
    } else if (a.kind == ArgKind::descriptor && a.object != passed[p]->object) {
      const auto block = static_cast<const TensorDescriptor*>(a.object)->block_shape();
      call->changes.emplace_back(p, std::vector<std::int64_t>(block.begin(), block.end()));
    }
  }
  call->options = r.options;
  GilReleased unlocked;
  std::lock_guard lock(r.state.mutex);
  if (r.state.resolved.entries().size() < DecoratorState::kMaxResolvedCalls) r.state.resolved.add(std::move(call));
}

}  // namespace tritonrt::detail

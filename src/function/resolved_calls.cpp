// Decorated calls remembered whole (ResolvedCall, decorators.h). Once each decorator of a
// launch answered from memory, the call's resolution is a function of what those answers read
// of the passed arguments (a tuner's key included) and of the call's form: how many arguments,
// of which kinds, the caller's options and config. A later launch of that form that reads the
// same there is resolved by copying the outcome: one lookup (a hash of the integers read, then
// one check) instead of a walk of the layers.
#include <algorithm>
#include <cstring>
#include <vector>

#include "common/hashing.h"
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

// A call's hash: its form's number, then each integer read's kind and bits, in the form's order.
std::uint64_t fold_integer(std::uint64_t h, ArgKind kind, std::uint64_t bits) {
  return hash_mix(hash_mix(h, static_cast<std::uint64_t>(kind)), bits);
}

}  // namespace

const ResolvedCall* ResolvedCalls::find(std::size_t n, const ArgKind* kinds, const OptionsKey& caller,
                                        const Resolution& r) const {
  for (const Form* form : forms_.entries()) {
    if (form->given != n || form->chosen != r.launch->autotune_config || !(form->caller_options == caller) ||
        (n != 0 && std::memcmp(form->kinds.data(), kinds, n * sizeof(ArgKind)) != 0)) {
      continue;
    }
    std::uint64_t h = hash_mix(kHashSeed, form->number);
    for (const std::uint32_t p : form->integer_params) h = fold_integer(h, r.args[p].kind, r.args[p].value.u);
    // Its reads are of passed arguments only, bound by the caller.
    const ResolvedCall* found = calls_.find(h, [&](const ResolvedCall& c) {
      return c.form == form->number && same_integers(c.integer_reads, r.args) && still_reads(c.reads, r.args, r.device);
    });
    if (found != nullptr) return found;
  }
  return nullptr;
}

bool ResolvedCalls::add(std::unique_ptr<ResolvedCall> call) {
  if (full()) return false;
  const Form* form = nullptr;
  for (const Form* known : forms_.entries()) {
    if (known->given == call->given && known->chosen == call->chosen && known->caller_options == call->caller_options &&
        known->kinds == call->kinds && known->integer_params.size() == call->integer_reads.size() &&
        std::equal(known->integer_params.begin(), known->integer_params.end(), call->integer_reads.begin(),
                   [](std::uint32_t p, const ResolvedCall::IntegerRead& read) { return p == read.param; })) {
      form = known;
      break;
    }
  }
  if (form == nullptr) {
    auto made = std::make_unique<Form>(
        Form{forms_.entries().size(), call->given, call->chosen, call->caller_options, call->kinds, {}});
    for (const auto& read : call->integer_reads) made->integer_params.push_back(read.param);
    form = &forms_.add(std::move(made));
  }
  call->form = form->number;
  std::uint64_t h = hash_mix(kHashSeed, form->number);
  for (const auto& read : call->integer_reads) h = fold_integer(h, read.kind, read.bits);
  calls_.add(h, std::move(call));
  count_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool recall(std::span<const Arg> given, Resolution& r) {
  const auto& params = r.kernel.call_params;
  const std::size_t n = given.size();
  if (r.state.resolved.empty() || n > params.size()) return false;
  ArgKind kinds[kMaxParams];
  for (std::size_t i = 0; i < n; ++i) {
    r.args[params[i]] = given[i];
    kinds[i] = given[i].kind;
  }
  const ResolvedCall* c = r.state.resolved.find(n, kinds, OptionsKey(r.options), r);
  if (c == nullptr) return false;
  r.count = r.kernel.signature.params.size();
  for (const auto& [param, value] : c->values) r.args[param] = value;
  r.options = c->options;
  if (!c->changes.empty()) r.reshape_descriptors(c->changes);
  return true;
}

void remember(std::span<const Arg> given, const Resolution& r) {
  if (r.ran || r.launch == nullptr || r.state.resolved.full()) return;
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
  r.state.resolved.add(std::move(call));
}

}  // namespace tritonrt::detail

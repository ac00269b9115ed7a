// The tuple's home: Triton's binder specializes a tuple's elements one by one, as arguments
// of a plain parameter, and flattens them into the kernel's parameters.
#include "common/kinds/kinds.h"
#include "tritonrt/error.h"

namespace tritonrt::detail {
namespace {

using Key = ParamSpec::Key;

// "[1][0]": where an element sits in its parameter's tuple, for messages.
std::string element_path(std::span<const std::size_t> path) {
  std::string out;
  for (const std::size_t i : path) {
    out += '[';
    out += std::to_string(i);
    out += ']';
  }
  return out;
}

// Where an element sits in its parameter's tuples; of fixed depth, so that specializing a
// tuple allocates nothing.
struct ElementPath {
  static constexpr std::size_t kMaxDepth = 32;
  std::size_t at[kMaxDepth];
  std::size_t depth = 0;
  std::span<const std::size_t> span() const { return {at, depth}; }
};

[[noreturn]] void refuse_element(const KernelSignature& sig, std::size_t index, std::span<const std::size_t> path,
                                 std::string_view why) {
  raise<ArgumentError>(param_site(sig, index), "tuple element {}: {}", element_path(path), why);
}

// Enters element `i` of the current tuple.
void enter(ElementPath& path, std::size_t i, const KernelSignature& sig, std::size_t index) {
  if (path.depth == ElementPath::kMaxDepth) {
    raise<ArgumentError>(param_site(sig, index), "its tuples nest deeper than {} levels, tritonrt's limit",
                         ElementPath::kMaxDepth);
  }
  path.at[path.depth++] = i;
}

// A constexpr tuple is part of the key by value: only values a key can hold.
ParamCode specialize_constexpr_tuple(const SpecializationRules&, const ParamRule&, const Arg& a,
                                     const KernelSignature& sig, std::size_t index) {
  ElementPath path;
  const auto check = [&](const auto& self, const Arg& t) -> void {
    const auto elements = t.elements();
    for (std::size_t i = 0; i < elements.size(); ++i) {
      enter(path, i, sig, index);
      if (elements[i].kind == ArgKind::tuple) {
        self(self, elements[i]);
      } else if (!kind_ops(elements[i].kind).in_constexpr_tuple) {
        refuse_element(sig, index, path.span(),
                       "is tl.constexpr: a tuple passed to it holds bools, integers, floats, strings, dtypes, None "
                       "and tuples of them, got " +
                           describe(elements[i]));
      }
      --path.depth;
    }
  };
  check(check, a);
  return {TypeCode::kConstexpr, Key::none};
}

ParamCode specialize_runtime_tuple(const SpecializationRules& rules, const ParamRule& p, const Arg& a,
                                   const KernelSignature& sig, std::size_t index) {
  refuse_annotation(rules, p, a, sig, index);
  return {TypeCode::kTuple, Key::none};  // its elements: specialize_tuple
}

std::string tuple_repr(const Arg& a, const ParamInfo& param) {
  const auto elements = a.elements();
  std::string out = "(";
  for (std::size_t i = 0; i < elements.size(); ++i) out += (i ? ", " : "") + python_repr(elements[i], param);
  return out + (elements.size() == 1 ? ",)" : ")");
}

// Triton's binder specializes a tuple's elements as arguments of a plain parameter.
const ParamRule kTupleElementRule = ParamRule::make(false, false, true, true, std::nullopt);

// One element's code (not a tuple's), with the checks Triton's binder makes of it.
ParamCode element_code(const SpecializationRules& rules, const HotRules& hot, const Arg& e, const KernelSignature& sig,
                       std::size_t index, const ElementPath& path, void** param, std::uint64_t* slot) {
  const auto refuse = [&](std::string_view why) { refuse_element(sig, index, path.span(), why); };
  switch (e.kind) {
    case ArgKind::string:
    case ArgKind::dtype:
      refuse_element(sig, index, path.span(),
                     "only tl.constexpr parameters take " +
                         std::string(e.kind == ArgKind::string ? "strings" : "dtypes") + ", not a tuple's elements");
    case ArgKind::python_default:
    case ArgKind::unset:
      refuse_element(sig, index, path.span(), "got " + describe(e));
    default:
      break;
  }
  ParamCode code;
  try {
    code = param != nullptr ? specialize_argument<true>(rules, hot, kTupleElementRule, e, sig, index, param, slot)
                            : specialize_argument<false>(rules, hot, kTupleElementRule, e, sig, index);
  } catch (const ArgumentError& error) {
    // The parameter's message, said of the element.
    std::string_view what = error.what();
    const std::string prefix = error_message(param_site(sig, index), "");
    if (what.starts_with(prefix)) what.remove_prefix(prefix.size());
    refuse(what);
  }
  // The constexpr elements a tuple can have, keyed by value as Triton keys them.
  if (code.type == TypeCode::kConstexpr) code.key = e.kind == ArgKind::none ? Key::none : Key::one;
  return code;
}
void tuple_codes(const SpecializationRules& rules, const HotRules& hot, const Arg& tuple, const KernelSignature& sig,
                 std::size_t index, ElementPath& path, TupleSink& sink) {
  const auto push = [&](ParamCode code) {
    if (sink.code_count == sink.code_capacity) {
      raise<ArgumentError>(param_site(sig, index), "its tuple has more than {} elements and levels, tritonrt's limit",
                           sink.code_capacity);
    }
    sink.codes[sink.code_count++] = code;
  };
  push({TypeCode::kTuple, Key::none});
  const auto elements = tuple.elements();
  for (std::size_t i = 0; i < elements.size(); ++i) {
    enter(path, i, sig, index);
    const Arg& e = elements[i];
    if (e.kind == ArgKind::tuple) {
      tuple_codes(rules, hot, e, sig, index, path, sink);
    } else if (sink.params == nullptr) {
      push(element_code(rules, hot, e, sig, index, path, nullptr, nullptr));
    } else {
      if (sink.param_count == sink.param_capacity) {
        raise<ArgumentError>(param_site(sig, index), "the call passes more than {} runtime values, tritonrt's limit",
                             sink.param_capacity);
      }
      void* param = nullptr;
      const ParamCode code = element_code(rules, hot, e, sig, index, path, &param, &sink.slots[sink.slot_count]);
      push(code);
      if (code.type != TypeCode::kConstexpr) {
        if (param == &sink.slots[sink.slot_count]) ++sink.slot_count;
        sink.params[sink.param_count++] = param;
      }
    }
    --path.depth;
  }
  push({TypeCode::kTupleEnd, Key::none});
}

ParamSpec tuple_entry(const SpecializationRules& rules, const HotRules& hot, const Arg& tuple,
                      const KernelSignature& sig, std::size_t index, ElementPath& path) {
  ParamSpec out;
  out.type = "(";
  const auto elements = tuple.elements();
  for (std::size_t i = 0; i < elements.size(); ++i) {
    enter(path, i, sig, index);
    const Arg& e = elements[i];
    ParamSpec p;
    if (e.kind == ArgKind::tuple) {
      p = tuple_entry(rules, hot, e, sig, index, path);
    } else {
      const ParamCode code = element_code(rules, hot, e, sig, index, path, nullptr, nullptr);
      p.type = TypeCode::is_descriptor(code.type) ? descriptor_type(e, &rules) : type_name(rules, code.type);
      p.key = code.key;
      if (code.type == TypeCode::kConstexpr) {
        p.key = Key::none;
        p.value = e.kind == ArgKind::none ? "None" : "1";
      }
    }
    out.type += (i ? ", " : "") + (p.is_tuple() ? p.type : "'" + p.type + "'");
    out.elements.push_back(std::move(p));
    --path.depth;
  }
  out.type += elements.size() == 1 ? ",)" : ")";
  return out;
}

}  // namespace

void specialize_tuple(const SpecializationRules& rules, const Arg& tuple, const KernelSignature& sig, std::size_t index,
                      TupleSink& sink) {
  ElementPath path;
  tuple_codes(rules, HotRules(rules), tuple, sig, index, path, sink);
}

ParamSpec tuple_spec(const SpecializationRules& rules, const Arg& tuple, const KernelSignature& sig,
                     std::size_t index) {
  ElementPath path;
  return tuple_entry(rules, HotRules(rules), tuple, sig, index, path);
}

std::string tuple_keys(const ParamSpec& tuple) {
  std::string out = "(";
  for (std::size_t i = 0; i < tuple.elements.size(); ++i) {
    const ParamSpec& e = tuple.elements[i];
    if (i) out += ", ";
    out += e.is_tuple() ? tuple_keys(e) : key_repr(e);
  }
  return out + (tuple.elements.size() == 1 ? ",)" : ")");
}

const KindOps kTupleKind{
    .describe = [](const Arg& a) { return "a tuple of " + std::to_string(a.value.u); },
    .repr = tuple_repr,
    .specialize_constexpr = specialize_constexpr_tuple,
    .specialize_runtime = specialize_runtime_tuple,
    .key_repr = nullptr,
    .in_constexpr_tuple = true,
    .header_value = nullptr,
    .header_param = nullptr,
};

}  // namespace tritonrt::detail

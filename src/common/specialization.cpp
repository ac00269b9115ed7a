#include "common/specialization.h"

#include <charconv>

#include "common/kinds/kinds.h"
#include "tritonrt/error.h"

namespace tritonrt::detail {
namespace {

using Key = ParamSpec::Key;

[[noreturn]] void fail(const KernelSignature& sig, std::size_t index, const std::string& what) {
  raise<ArgumentError>(param_site(sig, index), what);
}

}  // namespace

ParamRule ParamRule::make(bool is_constexpr, bool is_const, bool specialize, bool align,
                          std::optional<std::uint8_t> annotated) {
  ParamRule r;
  r.is_constexpr = is_constexpr;
  r.specialize = specialize;
  r.annotated = is_constexpr ? std::nullopt : annotated;
  r.route = is_constexpr ? Route::constexpr_value : r.annotated ? Route::rare : Route::runtime;
  r.pointer_base = is_const ? TypeCode::kConstPointer : TypeCode::kPointer;
  r.key_otherwise = !specialize ? ParamSpec::Key::none : ParamSpec::Key::plain;
  r.key_if_divisible = !specialize ? ParamSpec::Key::none : align ? ParamSpec::Key::divisible : ParamSpec::Key::plain;
  return r;
}

std::optional<std::uint8_t> parse_type_code(std::string_view type) {
  bool pointer = false;
  bool is_const = false;
  if (type.starts_with("*k")) {
    pointer = is_const = true;
    type.remove_prefix(2);
  } else if (type.starts_with("*")) {
    pointer = true;
    type.remove_prefix(1);
  }
  const auto dtype = parse_dtype(type);
  if (!dtype) return std::nullopt;
  return pointer ? TypeCode::pointer(*dtype, is_const) : TypeCode::scalar(*dtype);
}

std::string type_name(const SpecializationRules& rules, std::uint8_t code) {
  if (code == TypeCode::kConstexpr) return "constexpr";
  const DType t = TypeCode::dtype(code);
  if (TypeCode::is_descriptor(code)) return "tensordesc<" + std::string(to_string(t)) + ">";
  if (TypeCode::is_pointer(code)) {
    return rules.pointer_types[static_cast<int>(t)][code >= TypeCode::kConstPointer ? 1 : 0];
  }
  return std::string(to_string(t));
}

void bind_arguments(const KernelSignature& sig, std::span<const std::optional<Arg>> defaults,
                    std::span<const Arg> given, Arg* out) {
  const std::size_t n = sig.params.size();
  if (given.size() > n) {
    raise<ArgumentError>({sig.name}, "takes {} argument{}, {} were given", n, n == 1 ? "" : "s", given.size());
  }
  for (std::size_t i = 0; i < given.size(); ++i) out[i] = given[i];
  for (std::size_t i = given.size(); i < n; ++i) {
    if (defaults[i]) {
      out[i] = *defaults[i];
      continue;
    }
    fail(sig, i,
         "missing argument (kernel takes " + std::to_string(n) + ", " + std::to_string(given.size()) +
             " given, and this parameter has no default)");
  }
}

ParamCode specialize_rare_argument(const SpecializationRules& rules, const ParamRule& p, const Arg& a,
                                   const KernelSignature& sig, std::size_t index) {
  const KindOps& kind = kind_ops(a.kind);
  return p.is_constexpr ? kind.specialize_constexpr(rules, p, a, sig, index)
                        : kind.specialize_runtime(rules, p, a, sig, index);
}

std::string key_repr(const ParamSpec& p) {
  if (p.type == "constexpr") return p.value;
  switch (p.key) {
    case Key::none:
      return "None";
    case Key::plain:
      return "''";
    case Key::divisible:
      return "'D'";
    case Key::one:
      return "1";
  }
  return "None";
}

std::string dtype_text(DType type, ArgSource source) {
  if (source == ArgSource::tensor && !torch_name(type).empty()) return "torch." + std::string(torch_name(type));
  return std::string(to_string(type));
}

}  // namespace tritonrt::detail

namespace tritonrt {

std::vector<std::int64_t> ParamSpec::descriptor_block_shape() const {
  // What descriptor_type writes, read back: anything but positive integers in the brackets is
  // not a block shape.
  const std::string_view type = this->type;
  if (!type.starts_with("tensordesc<")) return {};
  const auto open = type.find('[');
  const auto close = type.find(']', open);
  if (open == std::string_view::npos || close == std::string_view::npos) return {};
  std::vector<std::int64_t> dims;
  for (std::size_t at = open + 1; at <= close;) {
    while (type[at] == ' ') ++at;
    std::int64_t dim = 0;
    const auto [end, error] = std::from_chars(type.data() + at, type.data() + close, dim);
    std::size_t next = static_cast<std::size_t>(end - type.data());
    while (type[next] == ' ') ++next;
    if (error != std::errc() || dim <= 0 || (next != close && type[next] != ',')) return {};
    dims.push_back(dim);
    at = next + 1;
  }
  return dims;
}

std::string Specialization::repr() const {
  std::string out = "[";
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& p = params[i];
    if (i) out += ", ";
    out += p.is_tuple() ? "(" + p.type + ", " + detail::tuple_keys(p) + ")"
                        : "('" + p.type + "', " + detail::key_repr(p) + ")";
  }
  return out + "]";
}

}  // namespace tritonrt

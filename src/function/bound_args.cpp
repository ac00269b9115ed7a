#include <algorithm>
#include <limits>

#include "common/errors.h"
#include "common/specialization.h"
#include "function/param_names.h"
#include "tritonrt/jit_function.h"
#include "tritonrt/launch.h"
#include "tritonrt/signature.h"

namespace tritonrt {

namespace {

// The argument of parameter `name`, or null. Inline in both callers, with the errors out of
// line: a grid function calls them on every launch.
[[gnu::always_inline]] inline const Arg* find_arg(const KernelSignature& signature, std::span<const Arg> values,
                                                  const detail::ParamNames* names, std::string_view name) {
  if (names != nullptr) {
    const std::size_t i = names->find(name);
    return i < values.size() ? &values[i] : nullptr;
  }
  // Length and last character first: a kernel's names of one length mostly differ at the end
  // (BLOCK_M, BLOCK_N; stride_am, stride_ak), so the full comparison runs about once.
  const std::size_t n = std::min(signature.params.size(), values.size());
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& p = signature.params[i].name;
    if (p.size() == name.size() && (name.empty() || p.back() == name.back()) && p == name) return &values[i];
  }
  return nullptr;
}

[[noreturn, gnu::cold, gnu::noinline]] void no_parameter(const KernelSignature& signature, std::string_view name) {
  detail::raise<ArgumentError>({signature.name}, "has no parameter '{}'", name);
}

[[noreturn, gnu::cold, gnu::noinline]] void not_integer(const KernelSignature& signature, std::string_view name,
                                                        const Arg& a) {
  detail::raise<ArgumentError>({signature.name, name},
                               "is read as an integer (by a grid, heuristic or hook), but it is {}",
                               detail::describe(a));
}

}  // namespace

const Arg& BoundArgs::operator[](std::string_view name) const {
  const Arg* a = find_arg(signature_, values_, names_, name);
  if (a == nullptr) [[unlikely]]
    no_parameter(signature_, name);
  return *a;
}

std::int64_t BoundArgs::integer(std::string_view name) const {
  const Arg* a = find_arg(signature_, values_, names_, name);
  if (a == nullptr) [[unlikely]]
    no_parameter(signature_, name);
  const ArgKind kind = a->value_kind();
  if (kind == ArgKind::sint || kind == ArgKind::boolean) return a->value.i;
  if (kind == ArgKind::uint && a->value.u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return a->value.i;
  }
  not_integer(signature_, name, *a);
}

void BlockShapes::set(std::string_view name, std::span<const std::int64_t> block_shape) {
  const std::size_t n = signature_.params.size();
  std::size_t i = names_ != nullptr ? names_->find(name) : 0;
  if (names_ == nullptr) {
    while (i < n && signature_.params[i].name != name) ++i;
  }
  if (i < n) {
    changes_.emplace_back(i, std::vector<std::int64_t>(block_shape.begin(), block_shape.end()));
    return;
  }
  detail::raise<ArgumentError>({signature_.name}, "has no parameter '{}' for a config hook to give a block shape",
                               name);
}

}  // namespace tritonrt

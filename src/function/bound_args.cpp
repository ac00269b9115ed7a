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

// The index of parameter `name` among the first `n`, else `n`: through the kernel's name index
// where there is one, else by a scan. Inline in its callers, with the errors out of line: a
// grid function calls them on every launch.
[[gnu::always_inline]] inline std::size_t param_index(const KernelSignature& signature, const detail::ParamNames* names,
                                                      std::string_view name, std::size_t n) {
  if (names != nullptr) return std::min(names->find(name), n);
  // Length and last character first: a kernel's names of one length mostly differ at the end
  // (BLOCK_M, BLOCK_N; stride_am, stride_ak), so the full comparison runs about once.
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& p = signature.params[i].name;
    if (p.size() == name.size() && (name.empty() || p.back() == name.back()) && p == name) return i;
  }
  return n;
}

// The argument of parameter `name`, or null.
[[gnu::always_inline]] inline const Arg* find_arg(const KernelSignature& signature, std::span<const Arg> values,
                                                  const detail::ParamNames* names, std::string_view name) {
  const std::size_t n = std::min(signature.params.size(), values.size());
  const std::size_t i = param_index(signature, names, name, n);
  return i < n ? &values[i] : nullptr;
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
  const std::size_t i = param_index(signature_, names_, name, n);
  if (i < n) {
    changes_.emplace_back(i, std::vector<std::int64_t>(block_shape.begin(), block_shape.end()));
    return;
  }
  detail::raise<ArgumentError>({signature_.name}, "has no parameter '{}' for a config hook to give a block shape",
                               name);
}

}  // namespace tritonrt

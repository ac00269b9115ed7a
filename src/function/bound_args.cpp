#include <limits>

#include "common/errors.h"
#include "common/specialization.h"
#include "tritonrt/jit_function.h"
#include "tritonrt/launch.h"
#include "tritonrt/signature.h"

namespace tritonrt {

const Arg& BoundArgs::operator[](std::string_view name) const {
  for (std::size_t i = 0; i < signature_.params.size() && i < values_.size(); ++i) {
    if (signature_.params[i].name == name) return values_[i];
  }
  detail::raise<ArgumentError>({signature_.name}, "has no parameter '{}'", name);
}

std::int64_t BoundArgs::integer(std::string_view name) const {
  const Arg& a = (*this)[name];
  const ArgKind kind = a.value_kind();
  if (kind == ArgKind::sint || kind == ArgKind::boolean) return a.value.i;
  if (kind == ArgKind::uint && a.value.u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return a.value.i;
  }
  detail::raise<ArgumentError>({signature_.name, name},
                               "is read as an integer (by a grid, heuristic or hook), but it is {}",
                               detail::describe(a));
}

void BlockShapes::set(std::string_view name, std::span<const std::int64_t> block_shape) {
  for (std::size_t i = 0; i < signature_.params.size(); ++i) {
    if (signature_.params[i].name == name) {
      changes_.emplace_back(i, std::vector<std::int64_t>(block_shape.begin(), block_shape.end()));
      return;
    }
  }
  detail::raise<ArgumentError>({signature_.name}, "has no parameter '{}' for a config hook to give a block shape",
                               name);
}

}  // namespace tritonrt

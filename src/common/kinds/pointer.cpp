// The pointer kind's home: a device address with its element type, from a typed address or
// a tensor. Its launch-path specialization is inline (specialization.h).
#include "common/kinds/kinds.h"

namespace tritonrt::detail {

const KindOps kPointerKind{
    .describe = [](const Arg& a) { return "a device pointer (*" + std::string(to_string(a.dtype)) + ")"; },
    .repr = nullptr,
    .specialize_constexpr = refuse_as_constexpr,
    .specialize_runtime = annotated_or_unsupported,
    .in_constexpr_tuple = false,
};

}  // namespace tritonrt::detail

// The pointer kind's home: a device address with its element type, from a typed address or
// a tensor. Its launch-path specialization is inline (specialization.h).
#include "common/kinds/kinds.h"

namespace tritonrt::detail {
namespace {

// A typed header takes a pointer as its element type's C++ pointer, else as a DevicePtr.
HeaderParam pointer_header_param(const Arg& a, const std::string& name, const std::string& token) {
  const std::string element = element_type(a.dtype);
  return {element.empty() ? "tritonrt::DevicePtr" : "const " + element + "*", name, token};
}

}  // namespace

const KindOps kPointerKind{
    .describe = [](const Arg& a) { return "a device pointer (*" + std::string(to_string(a.dtype)) + ")"; },
    .repr = nullptr,
    .specialize_constexpr = refuse_as_constexpr,
    .specialize_runtime = annotated_or_unsupported,
    .key_repr = nullptr,
    .in_constexpr_tuple = false,
    .header_value = nullptr,
    .header_param = pointer_header_param,
};

}  // namespace tritonrt::detail

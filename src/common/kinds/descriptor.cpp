// The tensor descriptor's home (tritonrt/tensor_descriptor.h): Triton's type for one, which
// its block shape and Gluon layout are part of. The launch expands it (launch/launcher.cpp).
#include "common/kinds/kinds.h"
#include "tritonrt/error.h"
#include "tritonrt/tensor_descriptor.h"

namespace tritonrt::detail {
namespace {

// Triton types a descriptor by its element type and block shape, and keys it with None.
ParamCode specialize_descriptor(const SpecializationRules& rules, const ParamRule& p, const Arg& a,
                                const KernelSignature& sig, std::size_t index) {
  refuse_annotation(rules, p, a, sig, index);
  return {TypeCode::descriptor(a.dtype), ParamSpec::Key::none};
}

}  // namespace

std::string descriptor_type(const Arg& a, const SpecializationRules* rules) {
  const auto& d = *static_cast<const TensorDescriptor*>(a.object);
  std::string out = "tensordesc<" + std::string(to_string(d.dtype())) + "[";
  for (std::size_t i = 0; i < d.block_shape().size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(d.block_shape()[i]);
  }
  out += "]";
  if (const NvmmaSharedLayout* layout = d.layout()) {
    const auto value = [&](const std::string& field) -> std::string {
      const auto truth = [](bool b) { return b ? "True" : "False"; };
      if (field == "swizzle_byte_width") return std::to_string(layout->swizzle_byte_width);
      if (field == "element_bitwidth") return std::to_string(layout->element_bitwidth);
      if (field == "rank") return std::to_string(d.rank());
      if (field == "transposed") return truth(layout->transposed);
      return truth(layout->fp4_padded);
    };
    if (rules != nullptr && rules->nvmma_layout_class.empty()) {
      raise<ArgumentError>({},
                           "a tensor descriptor with a Gluon layout: Triton {} has no Gluon NVMMASharedLayout "
                           "whose printed form tritonrt can reproduce, so it cannot name the kernel's type",
                           rules->triton_version);
    }
    if (rules == nullptr) {
      out += ",NVMMASharedLayout(";
      for (const char* field : {"swizzle_byte_width", "element_bitwidth", "rank", "transposed", "fp4_padded"}) {
        out += std::string(field) + "=" + value(field) + (std::string_view(field) == "fp4_padded" ? "" : ", ");
      }
      return out + ")>";
    }
    out += "," + rules->nvmma_layout_class + "(";
    for (std::size_t i = 0; i < rules->nvmma_layout_fields.size(); ++i) {
      const auto& [field, fixed] = rules->nvmma_layout_fields[i];
      out += (i ? ", " : "") + field + "=" + (fixed ? *fixed : value(field));
    }
    out += ")";
  }
  return out + ">";
}

const KindOps kDescriptorKind{
    .describe = [](const Arg& a) { return "a tensor descriptor (" + descriptor_type(a, nullptr) + ")"; },
    .repr = nullptr,
    .specialize_constexpr = refuse_as_constexpr,
    .specialize_runtime = specialize_descriptor,
    .key_repr = nullptr,
    .in_constexpr_tuple = false,
    .header_value = nullptr,
    .header_param = nullptr,
};

}  // namespace tritonrt::detail

// The bridge's JSON answers are parsed in C++ (src/compiler/description.cpp); a malformed
// answer, from a changed bridge or Triton, must be a tritonrt::Error, never a crash. Each
// input goes to every parser: the corpus holds kernel descriptions, specialization rules and
// heuristic results.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "compiler/compiler.h"
#include "fuzz_check.h"
#include "tritonrt/error.h"

namespace {

using tritonrt::detail::KernelDescription;

// Reads every byte, so that ASan reports a string pointing into storage that moved or was freed.
void touch(const tritonrt::Arg& a) {
  FUZZ_CHECK(a.size == 0 || a.value.s != nullptr);
  volatile char sink = 0;
  for (std::size_t j = 0; j < a.size; ++j) sink = sink ^ a.value.s[j];
}

void check_kernel(const KernelDescription& k) {
  // One entry per parameter in every list, and every index the decorators hold is a parameter.
  const std::size_t n = k.signature.params.size();
  FUZZ_CHECK(k.param_rules.size() == n && k.defaults.size() == n);
  for (std::size_t i = 0; i < n; ++i) {
    FUZZ_CHECK(k.signature.params[i].has_default == k.defaults[i].has_value());
    if (k.defaults[i] && k.defaults[i]->kind == tritonrt::ArgKind::string) touch(*k.defaults[i]);
  }
  FUZZ_CHECK(k.layers.size() == k.signature.decorators.size());
  for (const auto& layer : k.layers) {
    for (const auto& t : layer.heuristic_targets) {
      FUZZ_CHECK(t.param < static_cast<std::ptrdiff_t>(n) && (t.param >= 0 || !t.option.empty()));
    }
    for (const auto* list : {&layer.keys, &layer.reset_to_zero, &layer.restore_value}) {
      for (const std::size_t i : *list) FUZZ_CHECK(i < n);
    }
    for (const auto& config : layer.configs) {
      for (const auto& [i, value] : config.params) {
        FUZZ_CHECK(i < n && k.signature.params[i].set_by_decorator);
        if (value.kind == tritonrt::ArgKind::string) touch(value);
      }
    }
  }
  for (const std::size_t i : k.call_params) FUZZ_CHECK(i < n && !k.signature.params[i].set_by_decorator);
}

// A kernel for heuristic results to name: (x_ptr, n, BLOCK), as the bridge would describe it.
const KernelDescription& heuristic_kernel() {
  static const KernelDescription kernel = [] {
    KernelDescription k;
    k.signature.name = "kernel";
    for (const char* name : {"x_ptr", "n", "BLOCK"}) k.signature.params.push_back({.name = name});
    return k;
  }();
  return kernel;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    check_kernel(tritonrt::detail::parse_kernel_description(text));
  } catch (const tritonrt::Error& e) {
    check_error_format(e);
  }
  try {
    const auto r = tritonrt::detail::parse_specialization_rules(text);
    // The specializer tests divisibility with a mask.
    FUZZ_CHECK(r.int_divisibility > 0 && std::has_single_bit(static_cast<std::uint64_t>(r.int_divisibility)));
    FUZZ_CHECK(r.pointer_divisibility > 0 && std::has_single_bit(static_cast<std::uint64_t>(r.pointer_divisibility)));
  } catch (const tritonrt::Error& e) {
    check_error_format(e);
  }
  try {
    const auto h = tritonrt::detail::parse_heuristic_result(heuristic_kernel(), text);
    // A string value's text is kept in value_text (the caller points value.s at its own copy).
    if (h.value.kind == tritonrt::ArgKind::string) FUZZ_CHECK(h.value.size == h.value_text.size());
    FUZZ_CHECK(h.value.kind != tritonrt::ArgKind::python_default);
    for (const auto& [i, facet] : h.reads) FUZZ_CHECK(i < heuristic_kernel().signature.params.size());
  } catch (const tritonrt::Error& e) {
    check_error_format(e);
  }
  return 0;
}

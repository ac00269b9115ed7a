// How bundles name kernels: a kernel's identity (what JitFunction::get finds a bundled kernel
// by) and what a bundle filter's or calls file's entry names. Compiled into the CLI too.
#pragma once

#include <string>
#include <string_view>

namespace tritonrt::detail {

/// module:kernel, what bundled kernels are found by: the .py file's name without directories
/// and suffix, or a dotted module's last part.
std::string bundle_identity(std::string_view source, std::string_view name);
/// Whether `wanted` (KERNEL, module:KERNEL or path.py:KERNEL, as a bundle filter or a calls
/// file names a kernel) names the kernel `name` of `source`: by name alone, by identity, or
/// that very file.
bool names_kernel(std::string_view wanted, std::string_view source, std::string_view name);

}  // namespace tritonrt::detail

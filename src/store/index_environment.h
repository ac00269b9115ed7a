// What an index record depends on in the environment, besides its files: the TRITON_,
// MLIR_ and LLVM_ variables (a superset of what Triton's cache key covers), and for a kernel
// named by module what decides where its import looks.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace tritonrt::detail {

/// The environment a record of the kernel `source` names is made in.
std::map<std::string, std::string> recorded_environment(std::string_view source);

/// Which variable of the environment a record was made in (`then`) differs now ("" when
/// none): every variable recorded or set must be as it was, but a chooser of the Python
/// environment only where it is set now.
std::string changed_variable(const std::map<std::string, std::string>& then,
                             const std::map<std::string, std::string>& now);

}  // namespace tritonrt::detail

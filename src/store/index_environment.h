// What an index record depends on in the environment, besides its files: the TRITON_,
// MLIR_ and LLVM_ variables, every variable the installed Triton's cache key reads and every
// variable the kernel's modules read (as the bridge observed them, set or not), and for a
// kernel named by module what decides where its import looks.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace tritonrt::detail {

/// Variables by name, each with its value or nullopt where it is unset.
using Environment = std::map<std::string, std::optional<std::string>>;

/// The environment a record of the kernel `source` names: `observed` (variables the bridge
/// says the kernel depends on) with their values now, and the variables of the rules above;
/// variables that only say where Triton keeps or shows things are left out.
Environment recorded_environment(std::string_view source, const Environment& observed = {});

/// Which variable of the environment a record was made in (`then`) differs now ("" when
/// none): every variable recorded or set must be as it was (unset where it was unset), but
/// a chooser of the Python environment only where it is set now.
std::string changed_variable(const Environment& then, std::string_view source);

}  // namespace tritonrt::detail

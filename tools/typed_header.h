// `tritonrt header CALLS.json`: a C++ header with one typed launch function per call of a
// calls file, so that a program passing a pointer of the wrong element type, a pointer for a
// scalar, or too few or too many arguments does not compile (scalars convert as C++ converts
// them).
//
//     // calls.json: [{"kernel": "kernels.py:add_kernel", "signature": "*fp32,*fp32,*fp32,4096,1024"}]
//     namespace kernels {
//     /// kernels.py:add_kernel(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32, n: int, BLOCK=1024)
//     inline void add_kernel(const tritonrt::LaunchConfig& config, const float* x_ptr, const float* y_ptr,
//                            const float* out_ptr, std::int64_t n) { ... }
//     }
//
// Each function takes what the call passes (the parameters no decorator sets, in order), typed
// from the call's tokens; constexpr parameters, None and strings are fixed at the call's values.
#pragma once

#include <string>
#include <vector>

#include "calls.h"

namespace tritonrt::cli {

/// The header for `calls` (read from `calls_file`), its functions in namespace `name_space`.
/// Gets each kernel (through Python where no bundle or index serves it) for its parameter
/// names. Throws CallsError for a call it cannot type (a tuple or descriptor argument).
std::string typed_header(const std::vector<Call>& calls, const std::string& calls_file, const std::string& name_space);

}  // namespace tritonrt::cli

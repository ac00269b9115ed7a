// The calls file of `tritonrt bundle create --calls CALLS.json`: the calls to compile for a
// bundle, one object each,
//   [{"kernel": "kernels/add.py:add_kernel", "signature": "*fp32,*fp32,*fp32,4096,1024",
//     "options": {"num_warps": 4}}, ...]
// read strictly: every problem names the file, the call and the field.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tritonrt/error.h"
#include "tritonrt/options.h"

namespace tritonrt::cli {

/// A calls file that cannot be read or does not describe calls.
class CallsError : public Error {
 public:
  using Error::Error;
};

/// One call: the kernel's source and name, its --signature text, Triton's compile options.
struct Call {
  std::string source, name, signature;
  CompileOptions options;
};

/// SOURCE:KERNEL split at its last colon, or nullopt when either part is missing.
std::optional<std::pair<std::string, std::string>> split_kernel(std::string_view spec);

/// The calls `text` describes; `file` names it in errors, and a relative `.py` source is
/// relative to its folder. Throws CallsError.
std::vector<Call> parse_calls(std::string_view text, const std::filesystem::path& file);

/// The calls of the file at `file`: a regular file (a FIFO or device is refused unread) of
/// at most 64 MiB. Throws CallsError.
std::vector<Call> read_calls(const std::filesystem::path& file);

}  // namespace tritonrt::cli

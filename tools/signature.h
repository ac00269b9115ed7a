// The command line's description of one call (`--signature '*fp32,*fp32,4096,1024'`) read
// into kernel arguments, strictly: a token that Python would not read as the same value is
// an error naming the token, never a silently different argument.
#pragma once

#include <deque>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "tritonrt/arg.h"

namespace tritonrt::cli {

/// A malformed `--signature`; the message names the bad token.
class SignatureError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// The stand-in addresses of `*T` (16-byte aligned) and `*T:unaligned`: only their
/// alignment takes part in specialization.
inline constexpr std::uintptr_t kAlignedAddress = 0x10000;
inline constexpr std::uintptr_t kUnalignedAddress = 0x10004;

/// The arguments `text` describes; string arguments point into `strings`, which must outlive
/// them. Throws SignatureError.
std::vector<Arg> parse_signature(std::string_view text, std::deque<std::string>& strings);

}  // namespace tritonrt::cli

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

/// What parsed arguments point at: strings' text, tuples' elements. Outlives the arguments.
struct SignatureStorage {
  std::deque<std::string> strings;
  std::deque<std::vector<Arg>> tuples;  ///< each tuple's elements, side by side
};

/// The comma-separated tokens of `text`, a tuple's parentheses and a string's quotes kept
/// whole, each without its surrounding spaces. Throws SignatureError for an unclosed string
/// or tuple.
std::vector<std::string_view> split_signature(std::string_view text);

/// The arguments `text` describes; strings and tuples point into `storage`. A tuple is
/// written as Python writes one: `(*fp32,*fp16)`, `(1,)`, `()`, nested `((2.0,1),(3,None))`.
/// Throws SignatureError.
std::vector<Arg> parse_signature(std::string_view text, SignatureStorage& storage);

}  // namespace tritonrt::cli

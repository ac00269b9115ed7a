// The one format of tritonrt's error messages:
//   tritonrt: kernel 'add_kernel', parameter 'n' (#3): value 4294967296 does not fit type i32
// Every throw inside the library goes through `raise`, so the format cannot drift apart.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <utility>
#include <string>
#include <string_view>

#include "tritonrt/error.h"

namespace tritonrt::detail {

/// What an error is about: a kernel (may be empty) and, where one is involved, a parameter;
/// or, with `op`, an operator and its argument, told as aten tells them ("my::op: argument
/// 'input' is a CPU tensor").
struct ErrorSite {
  std::string_view kernel{};
  std::string_view param{};
  std::ptrdiff_t index = -1;  ///< the parameter's position, when known
  bool op = false;            ///< `kernel` is an operator's name and `param` its argument
};

/// "kernel 'k', parameter 'p' (#i): what" with the parts the site has, printable.
std::string message_about(const ErrorSite& site, std::string_view what);

/// "tritonrt: " + message_about(site, what); an operator's message as it is.
std::string error_message(const ErrorSite& site, std::string_view what);

/// `text` with control bytes and bytes that are not UTF-8 written as \xNN.
std::string printable(std::string_view text);

/// `text` without error_message's leading "tritonrt: ", for quoting one message inside another.
std::string without_prefix(std::string text);

/// Throws E (a tritonrt::Error subclass) with `error_message(site, what)`.
template <class E>
[[noreturn]] [[gnu::cold]] void raise(const ErrorSite& site, std::string_view what) {
  throw E(error_message(site, what));
}

/// Throws DriverError with the CUresult `code`, the message formatted by {fmt}.
template <class... Args>
[[noreturn]] [[gnu::cold]] void raise_driver(int code, fmt::format_string<Args...> format, Args&&... args) {
  throw DriverError(error_message({}, fmt::format(format, std::forward<Args>(args)...)), code);
}

/// The same with the message formatted by {fmt}: raise<SourceError>(site, "'{}' {}", path, why).
template <class E, class First, class... Rest>
[[noreturn]] [[gnu::cold]] void raise(const ErrorSite& site, fmt::format_string<First, Rest...> format, First&& first,
                                      Rest&&... rest) {
  raise<E>(site, fmt::format(format, std::forward<First>(first), std::forward<Rest>(rest)...));
}

}  // namespace tritonrt::detail

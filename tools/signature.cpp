#include "signature.h"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstdint>
#include <limits>
#include <optional>

namespace tritonrt::cli {
namespace {

[[noreturn]] void fail(const std::string& what, std::string_view token) {
  // Control characters escaped: a NUL (from a calls file) would otherwise end the message.
  std::string shown;
  for (const char c : token) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      constexpr char kHex[] = "0123456789abcdef";
      const auto byte = static_cast<unsigned char>(c);
      shown += std::string("\\x") + kHex[byte >> 4] + kHex[byte & 15];
    } else {
      shown += c;
    }
  }
  throw SignatureError(what + ": '" + shown + "'");
}

// Triton's AOT compiler also spells the boolean type `i1`; tritonrt's name is `u1`.
std::string_view canonical_type(std::string_view name) { return name == "i1" ? std::string_view("u1") : name; }

DType dtype(std::string_view name, std::string_view token) {
  const auto t = parse_dtype(canonical_type(name));
  if (!t) fail("unknown type '" + std::string(name) + "' in argument", token);
  return *t;
}

// A Python integer literal: decimal without leading zeros, or 0x / 0o / 0b, with single
// underscores between digits; nullopt when `token` is not one. Values outside
// [-2^63, 2^64) are an error (no Triton type holds them).
std::optional<Arg> parse_int(std::string_view token) {
  std::string_view t = token;
  const bool negative = t.starts_with('-');
  if (negative || t.starts_with('+')) t.remove_prefix(1);
  int base = 10;
  if (t.size() > 1 && t[0] == '0' && std::isalpha(static_cast<unsigned char>(t[1]))) {
    const char prefix = static_cast<char>(std::tolower(static_cast<unsigned char>(t[1])));
    base = prefix == 'x' ? 16 : prefix == 'o' ? 8 : prefix == 'b' ? 2 : 0;
    if (base == 0) return std::nullopt;
    t.remove_prefix(2);
    if (t.starts_with('_')) t.remove_prefix(1);
  }
  std::string digits;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '_' && i > 0 && i + 1 < t.size() && t[i - 1] != '_') continue;
    const int value = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                      : std::isalpha(static_cast<unsigned char>(c))
                          ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10
                          : 99;
    if (value >= base) return std::nullopt;
    digits += c;
  }
  if (digits.empty()) return std::nullopt;
  if (base == 10 && digits.size() > 1 && digits.front() == '0' && digits.find_first_not_of('0') != std::string::npos) {
    fail("leading zeros in a decimal integer are not allowed (as in Python; use 0o for octal)", token);
  }
  std::uint64_t magnitude = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  if (error != std::errc() || end != digits.data() + digits.size()) {
    fail("integer out of the range Triton's integer types hold (-2**63 to 2**64-1)", token);
  }
  Arg a;
  if (!negative) {
    pack_arg(a, magnitude);
    if (magnitude <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      pack_arg(a, static_cast<std::int64_t>(magnitude));
    }
  } else if (magnitude <= std::uint64_t{1} << 63) {
    pack_arg(a, static_cast<std::int64_t>(0 - magnitude));
  } else {
    fail("integer out of the range Triton's integer types hold (-2**63 to 2**64-1)", token);
  }
  return a;
}

// A Python float literal ("0.5", "1e-6", "-2.", ".5", "inf", "nan"); nullopt when not one.
std::optional<Arg> parse_float(std::string_view token) {
  std::string text;
  for (std::size_t i = 0; i < token.size(); ++i) {
    const char c = token[i];
    if (c == '_' && i > 0 && i + 1 < token.size() && std::isdigit(static_cast<unsigned char>(token[i - 1])) &&
        std::isdigit(static_cast<unsigned char>(token[i + 1]))) {
      continue;
    }
    text += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  std::string_view t = text;
  const bool negative = t.starts_with('-');
  if (negative || t.starts_with('+')) t.remove_prefix(1);
  double value = 0;
  if (t == "inf" || t == "infinity") {
    value = std::numeric_limits<double>::infinity();
  } else if (t == "nan") {
    value = std::numeric_limits<double>::quiet_NaN();
  } else {
    if (t.starts_with('-') || t.starts_with('+')) return std::nullopt;  // one sign, as float() reads
    for (const char c : t) {
      if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.' && c != 'e' && c != '-' && c != '+')
        return std::nullopt;
    }
    // strtod reads as Python does past the range: overflow to inf, underflow to 0.
    const std::string digits(t);
    char* end = nullptr;
    value = std::strtod(digits.c_str(), &end);
    if (digits.empty() || end != digits.c_str() + digits.size()) return std::nullopt;
  }
  Arg a;
  pack_arg(a, negative ? -value : value);
  return a;
}

Arg parse_token(std::string_view token, SignatureStorage& storage, int depth = 0);

Arg parse_number(std::string_view token) {
  const bool looks_float = token.find_first_of(".eEnN") != std::string_view::npos && !token.starts_with("0x") &&
                           !token.starts_with("0X") && !token.starts_with("-0x");
  if (const auto value = looks_float ? parse_float(token) : parse_int(token)) return *value;
  fail("not a number, pointer, string, bool, None or dtype (as Python would read it)", token);
}

// Deeper tuples than a kernel could read (tritonrt's specializer takes 32 levels).
constexpr int kMaxTupleDepth = 32;

// "(a, b)", "(a,)", "()": a tuple, its elements in storage.
Arg parse_tuple(std::string_view token, SignatureStorage& storage, int depth) {
  if (depth == kMaxTupleDepth) fail("tuples nest deeper than " + std::to_string(kMaxTupleDepth) + " levels", token);
  std::string_view inner = token.substr(1, token.size() - 2);
  while (!inner.empty() && inner.back() == ' ') inner.remove_suffix(1);
  std::vector<Arg> elements;
  if (!inner.empty()) {
    const bool trailing_comma = inner.back() == ',';
    if (trailing_comma) inner.remove_suffix(1);
    if (inner.find_first_not_of(' ') == std::string_view::npos) {
      fail("a comma with no value before it is no tuple (Python writes an empty tuple ())", token);
    }
    const auto tokens = split_signature(inner);
    if (tokens.size() == 1 && !trailing_comma) {
      fail("parentheses around one value are no tuple; a one-element tuple is written (x,)", token);
    }
    for (const std::string_view t : tokens) elements.push_back(parse_token(t, storage, depth + 1));
  }
  return tuple_arg(storage.tuples.emplace_back(std::move(elements)));
}

Arg parse_token(std::string_view token, SignatureStorage& storage, int depth) {
  Arg a;
  if (token.empty()) fail("empty argument in --signature", token);
  if (token.front() == '(') {
    if (token.back() != ')') fail("a tuple must end with ')'", token);
    return parse_tuple(token, storage, depth);
  }
  if (token.starts_with("tensordesc")) {
    fail("a tensor descriptor is not an argument the command line takes (compile a descriptor kernel from C++ or "
         "Python, where a TensorDescriptor is passed)",
         token);
  }
  if (token[0] == '*') {
    const auto colon = token.find(':');
    const std::string_view type = token.substr(1, colon == std::string_view::npos ? std::string_view::npos : colon - 1);
    // Triton's own spelling of an aligned pointer, `*fp32:16`, is taken as `*fp32`.
    const std::string_view suffix = colon != std::string_view::npos ? token.substr(colon + 1) : std::string_view();
    if (colon != std::string_view::npos && suffix != "unaligned" && suffix != "16") {
      fail("a pointer's suffix must be ':unaligned' (or ':16', aligned, as Triton writes it)", token);
    }
    const bool unaligned = suffix == "unaligned";
    pack_arg(a, DevicePtr{reinterpret_cast<const void*>(unaligned ? kUnalignedAddress : kAlignedAddress),
                          dtype(type, token)});
    return a;
  }
  if (token == "True" || token == "False") {
    pack_arg(a, token == "True");
    return a;
  }
  if (token == "None") return a;
  if (token.front() == '\'' || token.front() == '"') {
    if (token.size() < 2 || token.back() != token.front()) fail("a string must be quoted at both ends", token);
    storage.strings.emplace_back(token.substr(1, token.size() - 2));
    pack_arg(a, std::string_view(storage.strings.back()));
    return a;
  }
  if (token.starts_with("dtype:") || token.starts_with("tl.")) {
    std::string name(token.substr(token.find_first_of(":.") + 1));
    for (int i = 0; i < kDTypeCount; ++i) {
      const auto t = static_cast<DType>(i);
      if (language_name(t) == name) name = std::string(to_string(t));
    }
    pack_arg(a, dtype(name, token));
    return a;
  }
  // A bare type, as Triton's AOT compiler writes a runtime scalar it does not specialize
  // (`i32`, `fp16`): a value of that type that Triton's rules key as nothing special, neither
  // the constant 1 nor divisible by 16.
  if (const auto t = parse_dtype(canonical_type(token))) {
    if (*t == DType::u1) return scalar(*t, std::int64_t{0}).arg;  // as u1:0 reads
    if (is_floating(*t)) return scalar(*t, 0.5).arg;
    if (!to_string(*t).starts_with("fp")) return scalar(*t, 3).arg;  // the integer types
    fail("a bare type stands for a runtime scalar, and fp8 types are not scalar types", token);
  }
  if (const auto colon = token.find(':'); colon != std::string_view::npos) {
    const DType t = dtype(token.substr(0, colon), token);
    const Arg inner = parse_number(token.substr(colon + 1));
    switch (inner.kind) {
      case ArgKind::real:
        return scalar(t, inner.value.f).arg;
      case ArgKind::sint:
        return scalar(t, inner.value.i).arg;
      default:
        return scalar(t, inner.value.u).arg;
    }
  }
  return parse_number(token);
}

}  // namespace

std::vector<std::string_view> split_signature(std::string_view text) {
  std::vector<std::string_view> tokens;
  std::size_t start = 0;
  char quote = 0;
  int depth = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ',';
    if (quote != 0) {
      if (i == text.size()) fail("unterminated string in --signature", text.substr(start));
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      if (--depth < 0) fail("a ')' closes no tuple", text.substr(start, i + 1 - start));
    } else if (c == ',' && depth > 0 && i == text.size()) {
      fail("a '(' opens a tuple that is not closed", text.substr(start));
    } else if (c == ',' && depth == 0) {
      std::string_view token = text.substr(start, i - start);
      while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
      while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
      tokens.push_back(token);
      start = i + 1;
    }
  }
  if (tokens.size() == 1 && tokens[0].empty()) tokens.clear();  // no arguments at all
  return tokens;
}

std::vector<Arg> parse_signature(std::string_view text, SignatureStorage& storage) {
  std::vector<Arg> args;
  for (const std::string_view token : split_signature(text)) args.push_back(parse_token(token, storage));
  return args;
}

}  // namespace tritonrt::cli

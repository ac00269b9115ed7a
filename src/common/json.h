// Reading JSON that tritonrt did not necessarily write (Triton's metadata, the bridge's
// answers, files on disk): every parse and every field read fails as one typed tritonrt
// error naming the document and the field, never as a raw nlohmann exception.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>

#include "common/errors.h"

namespace tritonrt::detail {

template <class E>
class JsonReader {
 public:
  /// `document` names what is read, e.g. "Triton's metadata".
  JsonReader(ErrorSite site, std::string document) : site_(site), document_(std::move(document)) {}

  [[noreturn]] void fail(const std::string& problem) const { raise<E>(site_, "{} {}", document_, problem); }

  /// Documents nest a few levels; deeper is an error, as copying or printing a value recurses
  /// once per level (100,000 nested arrays would overflow the stack).
  static constexpr int kMaxDepth = 64;

  nlohmann::json parse(std::string_view text) const {
    try {
      return nlohmann::json::parse(text, [this](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
        if (depth > kMaxDepth) fail("nests deeper than " + std::to_string(kMaxDepth) + " levels");
        return true;
      });
    } catch (const nlohmann::json::parse_error& e) {
      fail("is not valid JSON (" + position(text, e.byte) + ")");
    } catch (const nlohmann::json::exception&) {
      fail("is not valid JSON");
    }
  }

  /// The member `name` of `object`; missing, null or of another type is an error. Integers
  /// must be JSON integers that fit T (no float, bool or wrapped value passes).
  template <class T>
  T field(const nlohmann::json& object, const char* name) const {
    if (!object.is_object()) fail("is not a JSON object where '" + std::string(name) + "' was expected");
    const auto it = object.find(name);
    if (it == object.end()) fail("has no field '" + std::string(name) + "'");
    return as<T>(*it, name);
  }

  /// As `field`, but a missing or null member gives `fallback`.
  template <class T>
  T field_or(const nlohmann::json& object, const char* name, T fallback) const {
    if (!object.is_object()) fail("is not a JSON object where '" + std::string(name) + "' was expected");
    const auto it = object.find(name);
    return it == object.end() || it->is_null() ? fallback : as<T>(*it, name);
  }

  /// `value` as T, with the same rules; `name` says where it came from.
  template <class T>
  T as(const nlohmann::json& value, const std::string& name) const {
    auto mistyped = [&](const char* expected) {
      const std::string found = value.is_structured()
                                    ? std::string("an ") + value.type_name()
                                    : value.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace).substr(0, 80);
      fail("field '" + name + "' should be " + expected + ", but is " + found);
    };
    if constexpr (std::is_same_v<T, bool>) {
      if (!value.is_boolean()) mistyped("true or false");
      return value.get<bool>();
    } else if constexpr (std::is_integral_v<T>) {
      if (!value.is_number_integer()) mistyped("an integer");
      if (value.is_number_unsigned()) {
        const auto v = value.get<std::uint64_t>();
        if (v > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) mistyped("an integer in range");
        return static_cast<T>(v);
      }
      const auto v = value.get<std::int64_t>();
      if (v < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
          (v > 0 && static_cast<std::uint64_t>(v) > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))) {
        mistyped("an integer in range");
      }
      return static_cast<T>(v);
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!value.is_string()) mistyped("a string");
      return value.get<std::string>();
    } else {
      static_assert(std::is_same_v<T, nlohmann::json>, "JsonReader reads bool, integers, strings or raw JSON");
      return value;
    }
  }

 private:
  // Where parsing stopped, in our words: "line 2, column 7, at 'x'" or "it ends too early".
  static std::string position(std::string_view text, std::size_t byte) {
    if (byte == 0 || byte > text.size()) return "it ends too early";
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i + 1 < byte; ++i) {
      column = text[i] == '\n' ? 1 : column + 1;
      line += text[i] == '\n';
    }
    const unsigned char c = static_cast<unsigned char>(text[byte - 1]);
    const std::string shown =
        c >= 0x20 && c < 0x7f ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
    return fmt::format("line {}, column {}, at '{}'", line, column, shown);
  }

  ErrorSite site_;
  std::string document_;
};

/// JSON as tritonrt writes its own files (the index, bundles): text that is not UTF-8
/// replaced, never an exception.
inline std::string dump_json(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace tritonrt::detail

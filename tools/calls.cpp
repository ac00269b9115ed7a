#include "calls.h"

#include <climits>
#include <type_traits>

#include "common/json.h"
#include "store/files.h"

namespace tritonrt::cli {
namespace {

// Sets Triton's compile option `name` from its JSON value; false when there is no such option.
bool set_option(const std::string& name, const nlohmann::json& value, CompileOptions& options,
                const detail::JsonReader<CallsError>& read) {
  bool known = false;
  auto visit = [&](const char* option, auto& field) {
    using T = typename std::remove_reference_t<decltype(field)>::value_type;
    if (name != option) return;
    known = true;
    if constexpr (std::is_same_v<T, bool>) {
      if (!value.is_boolean()) read.fail("has option '" + name + "', which must be true or false");
      field = value.get<bool>();
    } else {
      if (!value.is_number_unsigned() || value.get<std::uint64_t>() > INT_MAX) {
        read.fail("has option '" + name + "', which must be an integer from 0 to " + std::to_string(INT_MAX) +
                  ", got " + value.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace).substr(0, 40));
      }
      field = static_cast<int>(value.get<std::uint64_t>());
    }
  };
#define TRITONRT_CALLS_OPTION(type, option) visit(#option, options.option);
  TRITONRT_COMPILE_OPTIONS(TRITONRT_CALLS_OPTION)
#undef TRITONRT_CALLS_OPTION
  return known;
}

Call parse_call(const nlohmann::json& c, const std::filesystem::path& file, const std::string& where) {
  const detail::JsonReader<CallsError> read({}, "the calls file " + file.string() + ", " + where);
  if (!c.is_object() || !c.contains("kernel") || !c["kernel"].is_string() || !c.contains("signature") ||
      !c["signature"].is_string()) {
    read.fail("needs \"kernel\": \"SOURCE:KERNEL\" and \"signature\": \"...\"");
  }
  for (const auto& [field, value] : c.items()) {
    if (field != "kernel" && field != "signature" && field != "options") {
      read.fail("has an unknown field '" + field + "'");
    }
  }
  Call call;
  const auto kernel = c["kernel"].get<std::string>();
  const auto split = split_kernel(kernel);
  if (!split) read.fail("has \"kernel\" '" + kernel + "', which is not SOURCE:KERNEL");
  std::tie(call.source, call.name) = *split;
  if (call.source.ends_with(".py") && std::filesystem::path(call.source).is_relative()) {
    call.source = (file.parent_path() / call.source).lexically_normal().string();
  }
  call.signature = c["signature"].get<std::string>();
  if (c.contains("options")) {
    const auto& options = c["options"];
    if (!options.is_object()) read.fail("has \"options\" that are not an object");
    for (const auto& [option, value] : options.items()) {
      if (!value.is_boolean() && !value.is_number_unsigned()) {
        read.fail("has option '" + option + "', which must be a boolean or a non-negative integer");
      }
      if (!set_option(option, value, call.options, read)) read.fail("has an unknown option '" + option + "'");
    }
  }
  return call;
}

}  // namespace

std::optional<std::pair<std::string, std::string>> split_kernel(std::string_view spec) {
  const auto colon = spec.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == spec.size()) return std::nullopt;
  return std::make_pair(std::string(spec.substr(0, colon)), std::string(spec.substr(colon + 1)));
}

std::vector<Call> parse_calls(std::string_view text, const std::filesystem::path& file) {
  const detail::JsonReader<CallsError> read({}, "the calls file " + file.string());
  const auto j = read.parse(text);
  if (!j.is_array() || j.empty()) read.fail("must be a non-empty list of calls");
  std::vector<Call> calls;
  for (std::size_t n = 0; n < j.size(); ++n) calls.push_back(parse_call(j[n], file, "call " + std::to_string(n + 1)));
  return calls;
}

std::vector<Call> read_calls(const std::filesystem::path& file) {
  std::string why;
  const auto text = detail::read_file(file, detail::kMaxTextBytes, why);
  if (!text) detail::raise<CallsError>({}, "cannot read the calls file {}: it {}", file.string(), why);
  return parse_calls(*text, file);
}

}  // namespace tritonrt::cli

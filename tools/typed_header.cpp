#include "typed_header.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <set>
#include <string_view>

#include "common/compile_options.h"
#include "common/errors.h"
#include "signature.h"
#include "tritonrt/tritonrt.h"

namespace tritonrt::cli {
namespace {

// C++'s keywords (which Python identifiers may be) and the names the generated functions use
// themselves (their parameter `config`, locals `launch` and `kernel`, namespaces `std` and
// `tritonrt`): a parameter or kernel of such a name gets a trailing '_'.
const std::set<std::string_view> kKeywords = {
    "alignas",   "alignof",   "and",        "asm",          "auto",      "bitand",   "bitor",     "bool",
    "case",      "catch",     "char",       "class",        "compl",     "concept",  "const",     "consteval",
    "constexpr", "constinit", "const_cast", "co_await",     "co_return", "co_yield", "decltype",  "default",
    "delete",    "do",        "double",     "dynamic_cast", "enum",      "explicit", "export",    "extern",
    "float",     "friend",    "goto",       "inline",       "int",       "long",     "mutable",   "namespace",
    "new",       "noexcept",  "not",        "operator",     "or",        "private",  "protected", "public",
    "register",  "requires",  "short",      "signed",       "sizeof",    "static",   "struct",    "switch",
    "template",  "this",      "throw",      "typedef",      "typeid",    "typename", "union",     "unsigned",
    "using",     "virtual",   "void",       "volatile",     "wchar_t",   "xor",      "true",      "false",
    "nullptr",   "config",    "launch",     "kernel",       "std",       "tritonrt"};

std::string identifier(std::string_view name) {
  std::string out(name);
  if (kKeywords.count(name) != 0) out += '_';
  return out;
}

// The enumerator of `type` in tritonrt::DType: its name is Triton's.
std::string dtype_enumerator(DType type) { return "tritonrt::DType::" + std::string(to_string(type)); }

// The C++ element type a pointer to `type` is, or "" where C++ has none (fp16, bf16, fp8).
std::string element_type(DType type) {
  switch (type) {
    case DType::u1:
      return "bool";
    case DType::i8:
      return "std::int8_t";
    case DType::i16:
      return "std::int16_t";
    case DType::i32:
      return "std::int32_t";
    case DType::i64:
      return "std::int64_t";
    case DType::u8:
      return "std::uint8_t";
    case DType::u16:
      return "std::uint16_t";
    case DType::u32:
      return "std::uint32_t";
    case DType::u64:
      return "std::uint64_t";
    case DType::fp32:
      return "float";
    case DType::fp64:
      return "double";
    default:
      return "";
  }
}

// A C++ string literal of `text`.
std::string string_literal(std::string_view text) {
  std::string out = "\"";
  for (const unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char octal[8];
      std::snprintf(octal, sizeof octal, "\\%03o", c);
      out += octal;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string double_literal(double value) {
  if (std::isnan(value)) return "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(value))
    return value > 0 ? "std::numeric_limits<double>::infinity()" : "-std::numeric_limits<double>::infinity()";
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", value);
  std::string out = text;
  if (out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}

std::string int64_literal(std::int64_t value) {
  // -9223372036854775808 is no literal: the negation of one too large for the type.
  if (value == std::numeric_limits<std::int64_t>::min()) return "std::numeric_limits<std::int64_t>::min()";
  return "std::int64_t{" + std::to_string(value) + "}";
}

// What a comment may hold of a token: no line break, no end of a comment.
std::string comment_text(std::string_view text) {
  std::string out;
  for (const char c : text) out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
  return out;
}

// The C++ expression passing `a` as the call passed it (a value fixed in the header).
std::string fixed_value(const Arg& a, const std::string& where) {
  switch (a.kind) {
    case ArgKind::none:
      return "std::nullopt";
    case ArgKind::boolean:
      return a.value.u != 0 ? "true" : "false";
    case ArgKind::sint:
      return "std::int64_t{" + std::to_string(a.value.i) + "}";
    case ArgKind::uint:
      return "std::uint64_t{" + std::to_string(a.value.u) + "u}";
    case ArgKind::real:
      return "double{" + double_literal(a.value.f) + "}";
    case ArgKind::string:
      return "std::string_view{" + string_literal(std::string_view(a.value.s, a.size)) + "}";
    case ArgKind::dtype:
      return dtype_enumerator(a.dtype);
    case ArgKind::typed: {
      const std::string number = a.stored == ArgKind::real      ? double_literal(a.value.f)
                                 : a.stored == ArgKind::boolean ? std::string(a.value.u != 0 ? "true" : "false")
                                 : a.stored == ArgKind::sint    ? int64_literal(a.value.i)
                                                                : "std::uint64_t{" + std::to_string(a.value.u) + "u}";
      return "tritonrt::scalar(" + dtype_enumerator(a.dtype) + ", " + number + ")";
    }
    default:
      detail::raise<CallsError>({}, "{}: a typed header cannot fix this argument (a tuple, descriptor or pointer)",
                                where);
  }
}

// One parameter of the function: its declaration and the expression passing it, or (no
// declaration) the fixed expression.
struct Passed {
  std::string declaration;  ///< "" when fixed
  std::string expression;
  std::string shown;  ///< for the comment: "x_ptr: *fp32", "BLOCK=1024"
};

Passed passed(const ParamInfo& p, const Arg& a, const std::string& token, const std::string& where) {
  const std::string name = identifier(p.name);
  const bool fixed = p.is_constexpr || a.kind == ArgKind::none || a.kind == ArgKind::string || a.kind == ArgKind::dtype;
  if (fixed) return {"", fixed_value(a, where), p.name + "=" + token};
  switch (a.kind) {
    case ArgKind::pointer: {
      const std::string element = element_type(a.dtype);
      if (element.empty()) return {"tritonrt::DevicePtr " + name, name, p.name + ": " + token};
      return {"const " + element + "* " + name, name, p.name + ": " + token};
    }
    case ArgKind::sint:
      return {"std::int64_t " + name, name, p.name + ": int"};
    case ArgKind::uint:
      return {"std::uint64_t " + name, name, p.name + ": int"};
    case ArgKind::real:
      return {"double " + name, name, p.name + ": float"};
    case ArgKind::boolean:
      return {"bool " + name, name, p.name + ": bool"};
    case ArgKind::typed: {
      const std::string element = element_type(a.dtype);
      const std::string type = !element.empty() && a.dtype != DType::u1 ? element : "double";
      return {type + " " + name, "tritonrt::scalar(" + dtype_enumerator(a.dtype) + ", " + name + ")",
              p.name + ": " + token};
    }
    default:
      detail::raise<CallsError>({}, "{}: a typed header does not take a tuple or a descriptor argument yet", where);
  }
}

}  // namespace

std::string typed_header(const std::vector<Call>& calls, const std::string& calls_file, const std::string& name_space) {
  std::string out =
      "// Generated by `tritonrt header` from " + calls_file +
      ": do not edit. One typed launch function per call: a pointer\n"
      "// of the wrong type or a missing argument does not compile. Each passes what the call passes (the parameters "
      "no\n"
      "// decorator sets, in order); constexpr parameters, None and strings are fixed at the call's values.\n"
      "#pragma once\n\n#include <cstdint>\n#include <limits>\n#include <optional>\n#include <string_view>\n\n"
      "#include <tritonrt/tritonrt.h>\n\nnamespace " +
      name_space + " {\n";
  std::set<std::string> made;  // the functions' names so far
  for (std::size_t c = 0; c < calls.size(); ++c) {
    const Call& call = calls[c];
    const std::string where = calls_file + ", call " + std::to_string(c + 1) + " (" + call.name + ")";
    SignatureStorage storage;
    std::vector<Arg> args;
    try {
      args = parse_signature(call.signature, storage);
    } catch (const SignatureError& e) {
      detail::raise<CallsError>({}, "{}: {}", where, e.what());
    }
    const auto tokens = split_signature(call.signature);  // as written, for the comments
    auto& fn = JitFunction::get(call.source, call.name);
    std::vector<const ParamInfo*> params;
    for (const auto& p : fn.signature().params) {
      if (!p.set_by_decorator) params.push_back(&p);
    }
    if (args.size() > params.size()) {
      detail::raise<CallsError>({}, "{}: {} arguments, but the kernel takes {}", where, args.size(), params.size());
    }
    std::string declarations, expressions, shown;
    for (std::size_t i = 0; i < args.size(); ++i) {
      const Passed p =
          passed(*params[i], args[i], std::string(tokens[i]), where + ", parameter '" + params[i]->name + "'");
      if (!p.declaration.empty()) declarations += ", " + p.declaration;
      expressions += ", " + p.expression;
      shown += (shown.empty() ? "" : ", ") + p.shown;
    }
    // A kernel's first call is its name; a later one (other types or other values) adds the
    // call's number: no overloads, so no call is ambiguous between two of them.
    std::string name = identifier(call.name);
    for (std::size_t n = c + 1; made.count(name) != 0; ++n) name = identifier(call.name) + "_" + std::to_string(n);
    made.insert(name);
    // The call's options, where the caller's config leaves them unset.
    std::string options;
    detail::for_each_option(call.options, [&](const char* option, const auto& value) {
      if (!value) return;
      std::string text;
      if constexpr (std::is_same_v<std::decay_t<decltype(*value)>, bool>) {
        text = *value ? "true" : "false";
      } else {
        text = std::to_string(*value);
      }
      options += "  if (!launch.options." + std::string(option) + ") launch.options." + option + " = " + text + ";\n";
      shown += std::string(shown.empty() ? "" : ", ") + option + "=" + text;
    });
    out += "\n/// " + comment_text(call.source + ":" + call.name + "(" + shown + ")") + "\n";
    out += "inline void " + name + "(const tritonrt::LaunchConfig& config" + declarations + ") {\n";
    out += "  static tritonrt::JitFunction& kernel = tritonrt::JitFunction::get(" + string_literal(call.source) + ", " +
           string_literal(call.name) + ");\n";
    if (options.empty()) {
      out += "  kernel(config" + expressions + ");\n}\n";
    } else {
      out += "  tritonrt::LaunchConfig launch = config;\n" + options + "  kernel(launch" + expressions + ");\n}\n";
    }
  }
  return out + "\n}  // namespace " + name_space + "\n";
}

}  // namespace tritonrt::cli

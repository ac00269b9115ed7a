// The `tritonrt` command: shows what a call compiles to, without writing C++.
//
//   tritonrt compile kernels/add.py:add_kernel --target cuda:90 --signature '*fp32,*fp32,*fp32,4096,1024'
//   tritonrt signature kernels/add.py:add_kernel

#include <charconv>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

#include "signature.h"
#include "tritonrt/tritonrt.h"

namespace {

const char* kUsage = R"(usage:
  tritonrt compile SOURCE:KERNEL --signature ARGS [--target T] [options]
  tritonrt signature SOURCE:KERNEL

SOURCE is a .py file or an importable module (package.module).
ARGS describes one call, comma-separated, one entry per argument:
  *fp32, *bf16, ...    a device pointer to that type, 16-byte aligned
  *fp32:unaligned      a device pointer that is not 16-byte aligned
  1024, -3, 4294967296 an integer (Triton types it by value)
  0.5, 1e-6            a floating-point value
  True, False, None    a bool, None
  'text'               a string (constexpr parameters)
  dtype:fp16           a dtype (constexpr parameters), e.g. tl.float16
  i64:7                a scalar whose type is fixed (as tritonrt::scalar)
Trailing arguments may be omitted when the kernel gives them defaults.
options:
  --target T            cuda:90, cuda:80, hip:gfx942, ... (default: the current GPU)
  Triton's compile options, named as Triton names them (num_warps is --num-warps):
  --num-warps N  --num-stages N  --num-ctas N  --maxnreg N      (N a decimal integer)
  --enable-fp-fusion  --launch-pdl  --launch-cooperative-grid  --debug
                        switch an option on; --no-enable-fp-fusion etc. switch it off
)";

[[noreturn]] void usage_error(const std::string& message) {
  std::cerr << "tritonrt: " << message << "\n\n" << kUsage;
  std::exit(2);
}

std::pair<std::string, std::string> split_kernel(const std::string& spec) {
  const auto colon = spec.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size()) {
    usage_error("expected SOURCE:KERNEL, got '" + spec + "'");
  }
  return {spec.substr(0, colon), spec.substr(colon + 1)};
}

int print_signature(const tritonrt::KernelSignature& sig) {
  std::cout << "kernel      " << sig.full_name << "\nfile        " << sig.file << "\nparameters\n";
  for (std::size_t i = 0; i < sig.params.size(); ++i) {
    const auto& p = sig.params[i];
    std::cout << "  " << i << "  " << p.name;
    if (p.is_constexpr) std::cout << "  constexpr";
    if (!p.annotation_type.empty()) std::cout << "  annotated " << p.annotation_type;
    if (p.do_not_specialize) std::cout << "  do_not_specialize";
    if (p.do_not_specialize_on_alignment) std::cout << "  do_not_specialize_on_alignment";
    if (p.has_default) std::cout << "  = " << p.default_repr;
    if (p.set_by_decorator) std::cout << "  set by a decorator";
    std::cout << "\n";
  }
  for (const auto& d : sig.decorators) {
    std::cout << "decorator   " << d.type;
    if (d.kind == tritonrt::Decorator::Kind::autotune) {
      std::cout << "  autotune: " << d.configs << " configs, key";
      for (const auto& name : d.names) std::cout << " " << name;
    } else if (d.kind == tritonrt::Decorator::Kind::heuristics) {
      std::cout << "  heuristics for";
      for (const auto& name : d.names) std::cout << " " << name;
    } else {
      std::cout << "  wrapper";
    }
    std::cout << "\n";
  }
  return 0;
}

// A compile option's value: a decimal integer in 0..INT_MAX, nothing else (no sign, no
// octal, no empty string, nothing wrapped or cut).
int int_option(const std::string& flag, const char* value) {
  if (value == nullptr) usage_error(flag + " needs a value");
  const std::string_view text(value);
  int v = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v, 10);
  if (text.empty() || text[0] == '-' || text[0] == '+' || error != std::errc() || end != text.data() + text.size()) {
    usage_error(flag + " needs a decimal integer from 0 to " + std::to_string(INT_MAX) + ", got '" + std::string(text) + "'");
  }
  return v;
}

// --num-warps N, --launch-pdl, --no-launch-pdl, ...: one flag per option of the list in
// tritonrt/options.h. Returns how many arguments it used (0: not an option flag).
int parse_option(const std::string& flag, const char* next, tritonrt::CompileOptions& options) {
  auto spelled = [](const char* name) {
    std::string text = name;
    for (char& c : text) c = c == '_' ? '-' : c;
    return text;
  };
  int used = 0;
  auto visit = [&](const char* name, auto& field) {
    using T = typename std::remove_reference_t<decltype(field)>::value_type;
    const std::string option = spelled(name);
    if constexpr (std::is_same_v<T, bool>) {
      if (flag == "--" + option) { field = true; used = 1; }
      if (flag == "--no-" + option) { field = false; used = 1; }
    } else {
      if (flag == "--" + option) { field = int_option(flag, next); used = 2; }
    }
  };
#define TRITONRT_CLI_OPTION(type, name) visit(#name, options.name);
  TRITONRT_COMPILE_OPTIONS(TRITONRT_CLI_OPTION)
#undef TRITONRT_CLI_OPTION
  return used;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) usage_error("missing command");
  const std::string command = argv[1];
  if (command != "compile" && command != "signature") usage_error("unknown command '" + command + "'");
  const auto [source, name] = split_kernel(argv[2]);
  std::optional<std::string> signature;
  std::optional<std::string> target_text;
  tritonrt::CompileOptions options;
  for (int i = 3; i < argc; ++i) {
    const std::string opt = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
    if (opt == "--signature" && next) { signature = next; ++i; }
    else if (opt == "--target" && next) { target_text = next; ++i; }
    else if (const int used = parse_option(opt, next, options)) { i += used - 1; }
    else usage_error("unknown or incomplete option '" + opt + "'");
  }
  try {
    auto& fn = tritonrt::JitFunction::get(source, name);
    if (command == "signature") return print_signature(fn.signature());
    if (!signature) usage_error("compile needs --signature");
    std::deque<std::string> strings;
    std::vector<tritonrt::Arg> args;
    try {
      args = tritonrt::cli::parse_signature(*signature, strings);
    } catch (const tritonrt::cli::SignatureError& e) {
      usage_error(e.what());
    }
    const tritonrt::Target target = target_text ? tritonrt::Target::parse(*target_text) : tritonrt::Target::current();
    const auto artifact = fn.compile_packed(target, options, args);
    const auto& m = artifact->metadata;
    const auto& sig = fn.signature();
    std::cout << "kernel          " << sig.full_name << "\n"
              << "target          " << m.target.str() << " (warp size " << m.target.warp_size << ")\n"
              << "triton          " << m.triton_version << "\n"
              << "specialization  " << artifact->specialization.repr() << "\n";
    std::cout << "signature      ";
    for (std::size_t i = 0; i < sig.params.size(); ++i) {
      const auto& p = artifact->specialization.params[i];
      std::cout << " " << sig.params[i].name << ":" << (p.type == "constexpr" ? "constexpr=" + p.value : p.type);
      if (p.key == tritonrt::ParamSpec::Key::divisible) std::cout << "[div16]";
    }
    std::cout << "\n"
              << "num_warps       " << m.num_warps << "  num_stages " << m.num_stages << "  num_ctas " << m.num_ctas << "\n"
              << "shared memory   " << m.shared << " bytes\n"
              << "global scratch  " << m.global_scratch_size << " bytes (align " << m.global_scratch_align << ")\n"
              << "profile scratch " << m.profile_scratch_size << " bytes (align " << m.profile_scratch_align << ")\n"
              << "launch          pdl=" << (m.launch_pdl ? "yes" : "no")
              << " cooperative=" << (m.launch_cooperative_grid ? "yes" : "no") << "\n"
              << "binary          " << artifact->binary_kind << ", " << artifact->binary.size() << " bytes\n"
              << "hash            " << m.hash << "\n"
              << "stored in       " << artifact->cache_dir << "\n";
    return 0;
  } catch (const tritonrt::Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}

// The `tritonrt` command: shows what a call compiles to, without writing C++, and packs
// compiled kernels into bundles for deployment.
//
//   tritonrt compile kernels/add.py:add_kernel --target cuda:90 --signature '*fp32,*fp32,*fp32,4096,1024'
//   tritonrt signature kernels/add.py:add_kernel
//   tritonrt bundle create kernels.trb [--kernel kernels/add.py:add_kernel] [--target cuda:80,cuda:90]
//   tritonrt bundle create kernels.trb --calls calls.json --target cuda:80,cuda:90
//   tritonrt bundle list kernels.trb

#include <algorithm>
#include <charconv>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <vector>

#include "signature.h"
#include "tritonrt/bundle.h"
#include "tritonrt/tritonrt.h"

namespace {

const char* kUsage = R"(usage:
  tritonrt compile SOURCE:KERNEL --signature ARGS [--target T] [options]
  tritonrt signature SOURCE:KERNEL
  tritonrt bundle create OUT.trb [--kernel SOURCE:KERNEL]... [--target T,T...] [--hash H]...
  tritonrt bundle create OUT.trb --calls CALLS.json --target T,T...
  tritonrt bundle list FILE.trb [--json]

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
bundle create packs what this machine's index holds (every kernel, or those --kernel names,
for the --target list) into OUT.trb; with --calls it first compiles each call of CALLS.json,
  [{"kernel": "kernels/add.py:add_kernel", "signature": "*fp32,*fp32,*fp32,4096,1024",
    "options": {"num_warps": 4}}, ...]
for each target (all configs of an autotuned kernel), and packs exactly those. A relative
SOURCE in CALLS.json is relative to the file's folder.
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

// The options of one call, --flag style, into `options`.
void apply_options(const std::string& flag, const char* next, tritonrt::CompileOptions& options, int& i) {
  if (const int used = parse_option(flag, next, options)) {
    i += used - 1;
    return;
  }
  usage_error("unknown or incomplete option '" + flag + "'");
}

std::vector<tritonrt::Target> parse_targets(const std::string& list) {
  std::vector<tritonrt::Target> targets;
  std::string_view rest(list);
  while (true) {
    const auto comma = rest.find(',');
    const std::string one(rest.substr(0, comma));
    if (one.empty()) usage_error("--target needs a comma-separated list of targets, got '" + list + "'");
    targets.push_back(tritonrt::Target::parse(one));
    if (comma == std::string_view::npos) return targets;
    rest.remove_prefix(comma + 1);
  }
}

int print_compile(const tritonrt::JitFunction& fn, const tritonrt::Artifact& artifact) {
  const auto& m = artifact.metadata;
  const auto& sig = fn.signature();
  std::cout << "kernel          " << sig.full_name << "\n"
            << "target          " << m.target.str() << " (warp size " << m.target.warp_size << ")\n"
            << "triton          " << m.triton_version << "\n"
            << "specialization  " << artifact.specialization.repr() << "\n";
  std::cout << "signature      ";
  for (std::size_t i = 0; i < sig.params.size(); ++i) {
    const auto& p = artifact.specialization.params[i];
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
            << "binary          " << artifact.binary_kind << ", " << artifact.binary.size() << " bytes\n"
            << "hash            " << m.hash << "\n"
            << "stored in       " << artifact.cache_dir << "\n";
  return 0;
}

int command_kernel(const std::string& command, int argc, char** argv) {
  if (argc < 3) usage_error(command + " needs SOURCE:KERNEL");
  const auto [source, name] = split_kernel(argv[2]);
  std::optional<std::string> signature;
  std::optional<std::string> target_text;
  tritonrt::CompileOptions options;
  for (int i = 3; i < argc; ++i) {
    const std::string opt = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
    if (opt == "--signature" && next) { signature = next; ++i; }
    else if (opt == "--target" && next) { target_text = next; ++i; }
    else apply_options(opt, next, options, i);
  }
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
  return print_compile(fn, *fn.compile_packed(target, options, args));
}

// One call of a --calls file.
struct Call {
  std::string source, name, signature;
  tritonrt::CompileOptions options;
};

std::vector<Call> read_calls(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) usage_error("cannot read the calls file " + path.string());
  const auto bad = [&](const std::string& why) { usage_error("the calls file " + path.string() + ": " + why); };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    bad(std::string("is not JSON: ") + e.what());
  }
  if (!j.is_array() || j.empty()) bad("must be a non-empty list of calls");
  std::vector<Call> calls;
  for (std::size_t n = 0; n < j.size(); ++n) {
    const auto& c = j[n];
    const std::string where = "call " + std::to_string(n + 1);
    if (!c.is_object() || !c.contains("kernel") || !c["kernel"].is_string() || !c.contains("signature") ||
        !c["signature"].is_string()) {
      bad(where + " needs \"kernel\": \"SOURCE:KERNEL\" and \"signature\": \"...\"");
    }
    for (const auto& [field, value] : c.items()) {
      if (field != "kernel" && field != "signature" && field != "options") bad(where + " has an unknown field '" + field + "'");
    }
    Call call;
    std::tie(call.source, call.name) = split_kernel(c["kernel"].get<std::string>());
    if (call.source.ends_with(".py") && std::filesystem::path(call.source).is_relative()) {
      call.source = (path.parent_path() / call.source).lexically_normal().string();
    }
    call.signature = c["signature"].get<std::string>();
    if (c.contains("options")) {
      if (!c["options"].is_object()) bad(where + ": \"options\" must be an object");
      for (const auto& [option, value] : c["options"].items()) {
        std::string flag = "--" + option;
        for (char& ch : flag) ch = ch == '_' ? '-' : ch;
        std::string text;
        if (value.is_boolean()) {
          if (!value.get<bool>()) flag = "--no-" + flag.substr(2);
        } else if (value.is_number_unsigned()) {
          text = std::to_string(value.get<std::uint64_t>());
        } else {
          bad(where + ": option '" + option + "' must be a boolean or a non-negative integer");
        }
        if (parse_option(flag, text.empty() ? nullptr : text.c_str(), call.options) == 0) {
          bad(where + ": unknown option '" + option + "'");
        }
      }
    }
    calls.push_back(std::move(call));
  }
  return calls;
}

void print_bundle(const tritonrt::BundleInfo& info, bool json) {
  if (json) {
    nlohmann::json out = {{"path", info.path.string()}, {"created_by", info.created_by}, {"bytes", info.bytes}};
    out["kernels"] = nlohmann::json::array();
    for (const auto& k : info.kernels) {
      out["kernels"].push_back({{"identity", k.identity}, {"source", k.source}, {"name", k.name}, {"targets", k.targets},
                                {"artifacts", k.artifacts}, {"choices", k.choices},
                                {"heuristic_values", k.heuristic_values}, {"bytes", k.bytes}});
    }
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::cout << info.path.string() << ": " << info.kernels.size() << " kernels, " << info.bytes
            << " bytes, created by tritonrt " << info.created_by << "\n";
  for (const auto& k : info.kernels) {
    std::cout << "  " << k.identity << "  " << k.artifacts << " artifacts (" << k.bytes << " bytes), " << k.choices
              << " tuning choices, " << k.heuristic_values << " heuristic values, for";
    for (const auto& t : k.targets) std::cout << " " << t;
    std::cout << "\n    from " << k.source << "\n";
  }
}

int command_bundle(int argc, char** argv) {
  if (argc < 4) usage_error("bundle needs 'create OUT.trb' or 'list FILE.trb'");
  const std::string verb = argv[2];
  const std::filesystem::path file = argv[3];
  if (verb == "list") {
    bool json = false;
    for (int i = 4; i < argc; ++i) {
      if (std::string_view(argv[i]) == "--json") json = true;
      else usage_error("unknown option '" + std::string(argv[i]) + "' for bundle list");
    }
    print_bundle(tritonrt::read_bundle(file), json);
    return 0;
  }
  if (verb != "create") usage_error("unknown bundle command '" + verb + "' (create or list)");
  tritonrt::BundleFilter filter;
  std::optional<std::filesystem::path> calls_file;
  for (int i = 4; i < argc; ++i) {
    const std::string opt = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
    if (next == nullptr) usage_error("unknown or incomplete option '" + opt + "'");
    if (opt == "--kernel") filter.kernels.push_back(next);
    else if (opt == "--target") filter.targets = parse_targets(next);
    else if (opt == "--hash") filter.hashes.push_back(next);
    else if (opt == "--calls") calls_file = next;
    else usage_error("unknown option '" + opt + "' for bundle create");
    ++i;
  }
  if (calls_file) {
    if (filter.targets.empty()) usage_error("bundle create --calls needs --target");
    if (!filter.kernels.empty() || !filter.hashes.empty()) usage_error("--calls takes no --kernel or --hash");
    const auto calls = read_calls(*calls_file);
    const std::size_t total = calls.size() * filter.targets.size();
    std::size_t done = 0;
    for (const auto& call : calls) {
      std::deque<std::string> strings;
      std::vector<tritonrt::Arg> args;
      try {
        args = tritonrt::cli::parse_signature(call.signature, strings);
      } catch (const tritonrt::cli::SignatureError& e) {
        usage_error(calls_file->string() + ", " + call.name + ": " + e.what());
      }
      auto& fn = tritonrt::JitFunction::get(call.source, call.name);
      filter.kernels.push_back(call.source + ":" + call.name);
      const bool tuned = std::any_of(fn.signature().decorators.begin(), fn.signature().decorators.end(),
                                     [](const auto& d) { return d.kind == tritonrt::Decorator::Kind::autotune; });
      for (const auto& target : filter.targets) {
        const auto start = std::chrono::steady_clock::now();
        std::size_t artifacts = 0;
        if (tuned) {
          for (const auto& config : fn.compile_configs_packed(target, call.options, args)) {
            if (!config.artifact) throw tritonrt::CompileError(call.name + " config " + config.config + ": " + config.error);
            filter.hashes.push_back(config.artifact->metadata.hash);
            ++artifacts;
          }
        } else {
          filter.hashes.push_back(fn.compile_packed(target, call.options, args)->metadata.hash);
          artifacts = 1;
        }
        const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
        std::fprintf(stderr, "[%zu/%zu] %s for %s: %zu artifact%s (%.1f s)\n", ++done, total, call.name.c_str(),
                     target.str().c_str(), artifacts, artifacts == 1 ? "" : "s", took.count());
      }
    }
  }
  const auto info = tritonrt::create_bundle(file, filter);
  for (const auto& line : info.skipped) std::cerr << "tritonrt: skipped " << line << "\n";
  print_bundle(info, false);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) usage_error("missing command");
  const std::string command = argv[1];
  try {
    if (command == "compile" || command == "signature") return command_kernel(command, argc, argv);
    if (command == "bundle") return command_bundle(argc, argv);
    usage_error("unknown command '" + command + "'");
  } catch (const tritonrt::Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}

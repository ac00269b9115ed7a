// The `tritonrt` command: shows what a call compiles to, without writing C++, and packs
// compiled kernels into bundles for deployment.
//
//   tritonrt compile kernels/add.py:add_kernel --target cuda:90 --signature '*fp32,*fp32,*fp32,4096,1024'
//   tritonrt signature kernels/add.py:add_kernel
//   tritonrt bundle create kernels.trb [--kernel kernels/add.py:add_kernel] [--target cuda:80,cuda:90]
//   tritonrt bundle create kernels.trb --calls calls.json --target cuda:80,cuda:90
//   tritonrt bundle list kernels.trb

#include <dlfcn.h>

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

#include <CLI/CLI.hpp>

#include "signature.h"
#include "tritonrt/bundle.h"
#include "tritonrt/tritonrt.h"

namespace {

// The help text's notes: what CLI11 does not say about the arguments.
constexpr const char* kSignatureHelp = R"(ARGS describes one call, comma-separated, one entry per argument:
  *fp32, *bf16, ...    a device pointer to that type, 16-byte aligned (Triton's *fp32:16 too)
  *fp32:unaligned      a device pointer that is not 16-byte aligned
  1024, -3, 4294967296 an integer (Triton types it by value)
  0.5, 1e-6            a floating-point value
  True, False, None    a bool, None
  'text'               a string (constexpr parameters)
  dtype:fp16           a dtype (constexpr parameters), e.g. tl.float16
  i64:7                a scalar whose type is fixed (as tritonrt::scalar)
Trailing arguments may be omitted when the kernel gives them defaults.
SOURCE is a .py file or an importable module (package.module).)";

constexpr const char* kCallsHelp =
    R"(With --calls, each call of CALLS.json is compiled for each --target first (all configs of
an autotuned kernel), and exactly those are packed:
  [{"kernel": "kernels/add.py:add_kernel", "signature": "*fp32,*fp32,*fp32,4096,1024",
    "options": {"num_warps": 4}}, ...]
A relative SOURCE in CALLS.json is relative to the file's folder. Without --calls, what this
machine's index holds is packed: every kernel, or those --kernel names.)";

// A malformed command line: exit 2, the message on stderr.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void usage_error(const std::string& message) { throw UsageError(message); }

std::pair<std::string, std::string> split_kernel(const std::string& spec) {
  const auto colon = spec.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size()) {
    usage_error("expected SOURCE:KERNEL, got '" + spec + "'");
  }
  return {spec.substr(0, colon), spec.substr(colon + 1)};
}

const char* kind_name(tritonrt::Decorator::Kind kind) {
  switch (kind) {
    case tritonrt::Decorator::Kind::autotune:
      return "autotune";
    case tritonrt::Decorator::Kind::heuristics:
      return "heuristics";
    default:
      return "wrapper";
  }
}

void print_signature(const tritonrt::KernelSignature& sig, bool json) {
  if (json) {
    nlohmann::json out = {{"kernel", sig.full_name}, {"file", sig.file}};
    out["parameters"] = nlohmann::json::array();
    for (const auto& p : sig.params) {
      out["parameters"].push_back({{"name", p.name},
                                   {"constexpr", p.is_constexpr},
                                   {"annotation", p.annotation_type},
                                   {"do_not_specialize", p.do_not_specialize},
                                   {"do_not_specialize_on_alignment", p.do_not_specialize_on_alignment},
                                   {"default", p.has_default ? nlohmann::json(p.default_repr) : nlohmann::json()},
                                   {"set_by_decorator", p.set_by_decorator}});
    }
    out["decorators"] = nlohmann::json::array();
    for (const auto& d : sig.decorators) {
      out["decorators"].push_back(
          {{"type", d.type}, {"kind", kind_name(d.kind)}, {"configs", d.configs}, {"names", d.names}});
    }
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
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
}

// A compile option's value: a decimal integer in 0..INT_MAX, nothing else (no sign, no
// octal, no empty string, nothing wrapped or cut).
int int_option(const std::string& flag, std::string_view text) {
  int v = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v, 10);
  if (text.empty() || text[0] == '-' || text[0] == '+' || error != std::errc() || end != text.data() + text.size()) {
    usage_error(flag + " needs a decimal integer from 0 to " + std::to_string(INT_MAX) + ", got '" + std::string(text) +
                "'");
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
      if (flag == "--" + option) {
        field = true;
        used = 1;
      }
      if (flag == "--no-" + option) {
        field = false;
        used = 1;
      }
    } else {
      if (flag == "--" + option) {
        if (next == nullptr) usage_error(flag + " needs a value");
        field = int_option(flag, next);
        used = 2;
      }
    }
  };
#define TRITONRT_CLI_OPTION(type, name) visit(#name, options.name);
  TRITONRT_COMPILE_OPTIONS(TRITONRT_CLI_OPTION)
#undef TRITONRT_CLI_OPTION
  return used;
}

// Triton's compile options as flags of `command`: --num-warps N, ..., --launch-pdl and
// --no-launch-pdl (the list in tritonrt/options.h), set into `options` as they are parsed.
void add_compile_options(CLI::App& command, tritonrt::CompileOptions& options) {
  auto visit = [&](const char* name, auto& field) {
    using T = typename std::remove_reference_t<decltype(field)>::value_type;
    std::string flag = std::string("--") + name;
    for (char& c : flag) c = c == '_' ? '-' : c;
    if constexpr (std::is_same_v<T, bool>) {
      command
          .add_flag_callback(
              flag, [&field] { field = true; }, std::string("Triton's ") + name + " on")
          ->group("Triton's compile options");
      command
          .add_flag_callback(
              "--no-" + flag.substr(2), [&field] { field = false; }, std::string("... or off"))
          ->group("Triton's compile options");
    } else {
      command
          .add_option_function<std::string>(
              flag, [&field, flag](const std::string& value) { field = int_option(flag, value); },
              std::string("Triton's ") + name + " (a decimal integer)")
          ->type_name("N")
          ->group("Triton's compile options");
    }
  };
#define TRITONRT_CLI_OPTION(type, name) visit(#name, options.name);
  TRITONRT_COMPILE_OPTIONS(TRITONRT_CLI_OPTION)
#undef TRITONRT_CLI_OPTION
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

// Writes the artifact's binary and Triton's metadata into `dir`; returns their paths.
std::vector<std::string> write_artifact(const tritonrt::Artifact& artifact, const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string stem = (dir / artifact.metadata.name).string();
  const std::vector<std::pair<std::string, const std::string*>> files = {
      {stem + "." + artifact.binary_kind, &artifact.binary}, {stem + ".json", &artifact.metadata.json}};
  std::vector<std::string> written;
  for (const auto& [path, bytes] : files) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
    out.close();
    if (!out) throw tritonrt::ArtifactError("tritonrt: cannot write " + path);
    written.push_back(path);
  }
  return written;
}

void print_compile(const tritonrt::JitFunction& fn, const tritonrt::Artifact& artifact,
                   const std::vector<std::string>& written, bool json) {
  const auto& m = artifact.metadata;
  const auto& sig = fn.signature();
  if (json) {
    nlohmann::json params = nlohmann::json::array();
    for (std::size_t i = 0; i < sig.params.size(); ++i) {
      const auto& p = artifact.specialization.params[i];
      params.push_back({{"name", sig.params[i].name},
                        {"type", p.type},
                        {"value", p.type == "constexpr" ? nlohmann::json(p.value) : nlohmann::json()},
                        {"divisible_by_16", p.key == tritonrt::ParamSpec::Key::divisible}});
    }
    const nlohmann::json out = {
        {"kernel", sig.full_name},
        {"target", m.target.str()},
        {"warp_size", m.target.warp_size},
        {"triton", m.triton_version},
        {"specialization", artifact.specialization.repr()},
        {"parameters", std::move(params)},
        {"num_warps", m.num_warps},
        {"num_stages", m.num_stages},
        {"num_ctas", m.num_ctas},
        {"shared", m.shared},
        {"global_scratch", {{"size", m.global_scratch_size}, {"align", m.global_scratch_align}}},
        {"profile_scratch", {{"size", m.profile_scratch_size}, {"align", m.profile_scratch_align}}},
        {"launch_pdl", m.launch_pdl},
        {"launch_cooperative_grid", m.launch_cooperative_grid},
        {"binary_kind", artifact.binary_kind},
        {"binary_bytes", artifact.binary.size()},
        {"hash", m.hash},
        {"stored_in", artifact.cache_dir},
        {"written", written}};
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
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
            << "num_warps       " << m.num_warps << "  num_stages " << m.num_stages << "  num_ctas " << m.num_ctas
            << "\n"
            << "shared memory   " << m.shared << " bytes\n"
            << "global scratch  " << m.global_scratch_size << " bytes (align " << m.global_scratch_align << ")\n"
            << "profile scratch " << m.profile_scratch_size << " bytes (align " << m.profile_scratch_align << ")\n"
            << "launch          pdl=" << (m.launch_pdl ? "yes" : "no")
            << " cooperative=" << (m.launch_cooperative_grid ? "yes" : "no") << "\n"
            << "binary          " << artifact.binary_kind << ", " << artifact.binary.size() << " bytes\n"
            << "hash            " << m.hash << "\n"
            << "stored in       " << artifact.cache_dir << "\n";
  for (const auto& path : written) std::cout << "written         " << path << "\n";
}

std::vector<tritonrt::Arg> parse_call(const std::string& signature, std::deque<std::string>& strings,
                                      const std::string& where) {
  try {
    return tritonrt::cli::parse_signature(signature, strings);
  } catch (const tritonrt::cli::SignatureError& e) {
    usage_error(where + e.what());
  }
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
      if (field != "kernel" && field != "signature" && field != "options")
        bad(where + " has an unknown field '" + field + "'");
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
      out["kernels"].push_back({{"identity", k.identity},
                                {"source", k.source},
                                {"name", k.name},
                                {"targets", k.targets},
                                {"artifacts", k.artifacts},
                                {"choices", k.choices},
                                {"heuristic_values", k.heuristic_values},
                                {"bytes", k.bytes}});
    }
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
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

// `bundle create`: with --calls, compiles each call for each target first.
void create(const std::filesystem::path& file, tritonrt::BundleFilter filter, const std::string& calls_file) {
  if (!calls_file.empty()) {
    if (filter.targets.empty()) usage_error("bundle create --calls needs --target");
    if (!filter.kernels.empty() || !filter.hashes.empty()) usage_error("--calls takes no --kernel or --hash");
    const auto calls = read_calls(calls_file);
    const std::size_t total = calls.size() * filter.targets.size();
    std::size_t done = 0;
    for (const auto& call : calls) {
      std::deque<std::string> strings;
      const auto args = parse_call(call.signature, strings, calls_file + ", " + call.name + ": ");
      auto& fn = tritonrt::JitFunction::get(call.source, call.name);
      filter.kernels.push_back(call.source + ":" + call.name);
      const bool tuned = std::any_of(fn.signature().decorators.begin(), fn.signature().decorators.end(),
                                     [](const auto& d) { return d.kind == tritonrt::Decorator::Kind::autotune; });
      for (const auto& target : filter.targets) {
        const auto start = std::chrono::steady_clock::now();
        std::size_t artifacts = 0;
        if (tuned) {
          for (const auto& config : fn.compile_configs_packed(target, call.options, args)) {
            if (!config.artifact)
              throw tritonrt::CompileError(call.name + " config " + config.config + ": " + config.error);
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
}

// tritonrt, Triton (asked through Python), Python and the CUDA driver.
std::string version_text() {
  std::string text = std::string("tritonrt ") + TRITONRT_VERSION + "\n";
  try {
    text += "triton " + tritonrt::triton_version() + "\n";
  } catch (const tritonrt::Error& e) {
    text += std::string("triton unavailable (") + e.what() + ")\n";
  }
  text += "python " + tritonrt::python_version() + " (the compiler module's)\n";
  int driver = 0;
  if (void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    using GetVersion = int (*)(int*);
    if (auto get = reinterpret_cast<GetVersion>(dlsym(cuda, "cuDriverGetVersion"));
        get == nullptr || get(&driver) != 0) {
      driver = 0;
    }
  }
  text += driver > 0 ? "cuda driver " + std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10)
                     : std::string("cuda driver none");
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Inspect, compile and bundle @triton.jit kernels, as tritonrt runs them from C++.", "tritonrt"};
  app.set_version_flag("--version", version_text, "Print the versions of tritonrt, Triton, Python and the CUDA driver");
  app.require_subcommand(1);
  app.footer(kSignatureHelp);

  std::string kernel, signature, target_text, output, calls;
  bool json = false;
  tritonrt::CompileOptions options;
  std::vector<std::string> kernels, targets, hashes;
  std::string bundle_file;

  auto* sig = app.add_subcommand("signature", "Show a kernel's parameters and decorators");
  sig->add_option("kernel", kernel, "SOURCE:KERNEL")->required();
  sig->add_flag("--json", json, "Print JSON");

  auto* comp = app.add_subcommand("compile", "Compile one call and show what it compiled to");
  comp->add_option("kernel", kernel, "SOURCE:KERNEL")->required();
  comp->add_option("--signature", signature, "The call's arguments (ARGS below)")->required()->type_name("ARGS");
  comp->add_option("--target", target_text, "cuda:90, cuda:80, hip:gfx942, ... (default: the current GPU)")
      ->type_name("T");
  comp->add_option("-o,--output", output, "Write the binary and Triton's metadata into DIR")->type_name("DIR");
  comp->add_flag("--json", json, "Print JSON");
  add_compile_options(*comp, options);

  auto* bundle = app.add_subcommand("bundle", "Create or list bundles of compiled kernels");
  bundle->require_subcommand(1);
  auto* create_cmd = bundle->add_subcommand("create", "Pack compiled kernels into OUT.trb");
  create_cmd->add_option("out", bundle_file, "OUT.trb")->required();
  create_cmd->add_option("--kernel", kernels, "Only this kernel: SOURCE:KERNEL (or module:kernel, or KERNEL)")
      ->type_name("SOURCE:KERNEL");
  create_cmd->add_option("--target", targets, "Only these targets, comma-separated")->type_name("T,T...");
  create_cmd->add_option("--hash", hashes, "Only artifacts of this Triton hash")->type_name("H");
  create_cmd->add_option("--calls", calls, "Compile the calls of CALLS.json first, and pack those")
      ->type_name("CALLS.json");
  create_cmd->footer(kCallsHelp);
  auto* list_cmd = bundle->add_subcommand("list", "Show what FILE.trb holds");
  list_cmd->add_option("file", bundle_file, "FILE.trb")->required();
  list_cmd->add_flag("--json", json, "Print JSON");

  // A word where a command belongs must be one (CLI11 would only say one is missing).
  const auto check_command = [&](int at, const CLI::App& parent) {
    if (argc <= at || argv[at][0] == '-') return;
    std::string known;
    for (const auto* sub : parent.get_subcommands([](const CLI::App*) { return true; })) {
      if (sub->get_name() == argv[at]) return;
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    usage_error("unknown command '" + std::string(argv[at]) + "' (" + known + ")");
  };
  try {
    check_command(1, app);
    if (argc > 1 && std::string_view(argv[1]) == "bundle") check_command(2, *bundle);
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
      return app.exit(e);
    } catch (const CLI::ParseError& e) {
      usage_error(e.what());
    }
    if (*sig || *comp) {
      const auto [source, name] = split_kernel(kernel);
      std::deque<std::string> strings;
      const auto args = *comp ? parse_call(signature, strings, "") : std::vector<tritonrt::Arg>{};
      auto& fn = tritonrt::JitFunction::get(source, name);
      if (*sig) {
        print_signature(fn.signature(), json);
        return 0;
      }
      const tritonrt::Target target =
          target_text.empty() ? tritonrt::Target::current() : tritonrt::Target::parse(target_text);
      const auto artifact = fn.compile_packed(target, options, args);
      print_compile(fn, *artifact, output.empty() ? std::vector<std::string>{} : write_artifact(*artifact, output),
                    json);
      return 0;
    }
    if (*list_cmd) {
      print_bundle(tritonrt::read_bundle(bundle_file), json);
      return 0;
    }
    tritonrt::BundleFilter filter;
    filter.kernels = kernels;
    filter.hashes = hashes;
    for (const auto& list : targets) {
      for (auto& t : parse_targets(list)) filter.targets.push_back(std::move(t));
    }
    create(bundle_file, std::move(filter), calls);
    return 0;
  } catch (const UsageError& e) {
    std::cerr << "tritonrt: " << e.what() << "\n(run 'tritonrt --help', or 'tritonrt COMMAND --help')\n";
    return 2;
  } catch (const tritonrt::Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {  // e.g. a file that cannot be written
    std::cerr << "tritonrt: " << e.what() << "\n";
    return 1;
  }
}

// The `tritonrt` command: shows what a call compiles to, without writing C++, and packs
// compiled kernels into bundles for deployment.
//
//   tritonrt compile kernels/add.py:add_kernel --target cuda:90 --signature '*fp32,*fp32,*fp32,4096,1024'
//   tritonrt signature kernels/add.py:add_kernel
//   tritonrt bundle create kernels.trb [--kernel kernels/add.py:add_kernel] [--target cuda:80,cuda:90]
//   tritonrt bundle create kernels.trb --calls calls.json --target cuda:80,cuda:90
//   tritonrt bundle list kernels.trb          (or a program or library that embeds bundles)

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

#include <CLI/CLI.hpp>

#include "bundle_command.h"
#include "calls.h"
#include "command_support.h"
#include "report.h"
#include "signature.h"
#include "typed_header.h"
#include "common/errors.h"
#include "store/files.h"
#include "tritonrt/bundle.h"
#include "tritonrt/tritonrt.h"

namespace {

using tritonrt::cli::is_autotuned;
using tritonrt::cli::names_a_module;
using tritonrt::cli::parse_call;
using tritonrt::cli::search_current_folder_first;
using tritonrt::cli::usage_error;
using tritonrt::cli::UsageError;

// The help text's notes: what CLI11 does not say about the arguments.
constexpr const char* kSignatureHelp = R"(ARGS describes one call, comma-separated, one entry per argument:
  *fp32, *bf16, ...    a device pointer to that type, 16-byte aligned (Triton's *fp32:16 too)
  *fp32:unaligned      a device pointer that is not 16-byte aligned
  1024, -3, 4294967296 an integer (Triton types it by value)
  0.5, 1e-6            a floating-point value
  True, False, None    a bool, None
  'text'               a string (constexpr parameters)
  (*fp32,*fp16), (1,)  a tuple, as Python writes it (nested: ((2.0,1),(3,None)); empty: ())
  dtype:fp16           a dtype (constexpr parameters), e.g. tl.float16
  i64:7                a scalar whose type is fixed (as tritonrt::scalar), specialized by its
                       value as Triton's JIT does: Triton's AOT i32:16 (divisible by 16) means
                       the same; i32:1 is a runtime i32 of value 1 (the AOT constant 1 is 1)
  i32, fp16, i1, ...   a scalar of that type that Triton does not specialize (Triton's AOT
                       spelling; the same as i32:3, fp16:0.5, u1:0)
Trailing arguments may be omitted when the kernel gives them defaults.
SOURCE is a .py file or an importable module (package.module), found from the current
folder first, as `python -m` finds it.
--target is BACKEND:ARCH, or Triton's BACKEND:ARCH:WARP_SIZE (cuda:90:32).
With --json, an error is printed on stdout as {"error": {"kind": ..., "message": ...,
"exit_code": ...}}, and on stderr as without it; the exit code is the same.)";

constexpr const char* kCallsHelp =
    R"(With --calls, each call of CALLS.json is compiled for each --target first (all configs of
an autotuned kernel), and exactly those are packed:
  [{"kernel": "kernels/add.py:add_kernel", "signature": "*fp32,*fp32,*fp32,4096,1024",
    "options": {"num_warps": 4}}, ...]
A relative SOURCE in CALLS.json is relative to the file's folder. Without --calls, what this
machine's index holds is packed: every kernel, or those --kernel names.)";

constexpr const char* kHeaderHelp =
    R"(CALLS.json lists calls as `bundle create --calls` takes them. Each call gives one inline
function, named after its kernel, that takes the launch config and the arguments the call
passes, typed from its tokens: *fp32 -> const float* (fp16, bf16, fp8 -> tritonrt::DevicePtr),
an integer -> std::int64_t, a float -> double, a fixed type such as i32 -> std::int32_t;
constexpr parameters, None and strings are fixed at the call's values, and the call's options
fill what the config leaves unset. A kernel's later calls are named with their number in the
file (add_kernel_2). A pointer of the wrong element type or a missing argument is a compile
error; scalars convert as C++ converts them.)";

// SOURCE:KERNEL of the command line.
std::pair<std::string, std::string> kernel_argument(const std::string& spec) {
  auto split = tritonrt::cli::split_kernel(spec);
  if (!split) usage_error("expected SOURCE:KERNEL, got '" + spec + "'");
  return std::move(*split);
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

// What the command line asks for.
struct Request {
  CLI::App* signature = nullptr;
  CLI::App* compile = nullptr;
  CLI::App* bundle = nullptr;
  CLI::App* bundle_create = nullptr;
  CLI::App* bundle_list = nullptr;
  CLI::App* header = nullptr;
  std::string name_space = "kernels";
  std::string kernel, signature_text, target, output, calls, bundle_file, depfile;
  bool json = false, verify = false;
  tritonrt::CompileOptions options;
  std::vector<std::string> kernels, targets, hashes;
};

// An autotuned kernel compiles to the config that tuning on a GPU picks: `compile` says
// how to compile them all, with this call as a calls file's entry.
[[noreturn]] void autotuned(tritonrt::JitFunction& fn, const std::string& source, const Request& r) {
  nlohmann::json call = {{"kernel", (names_a_module(source) ? source : std::filesystem::absolute(source).string()) +
                                        ":" + fn.signature().name},
                         {"signature", r.signature_text}};
  nlohmann::json options = nlohmann::json::object();
#define TRITONRT_CLI_OPTION(type, name) \
  if (r.options.name) options[#name] = *r.options.name;
  TRITONRT_COMPILE_OPTIONS(TRITONRT_CLI_OPTION)
#undef TRITONRT_CLI_OPTION
  if (!options.empty()) call["options"] = std::move(options);
  std::size_t configs = 0;
  for (const auto& d : fn.signature().decorators) {
    if (d.kind == tritonrt::Decorator::Kind::autotune) configs = d.configs;
  }
  tritonrt::detail::raise<tritonrt::ArgumentError>(
      {fn.signature().name},
      "is autotuned ({} config{}): which one a call compiles to is decided by tuning on a GPU. To compile every "
      "config for a target, write the call into a calls file, CALLS.json: [{}], and run: tritonrt bundle create "
      "OUT.trb --calls CALLS.json --target {} (in C++: JitFunction::compile_configs). To compile one config, name "
      "the kernel under its decorator, as Python's {}.fn, and pass the config's values: tritonrt compile {}:{}.fn",
      configs, configs == 1 ? "" : "s", call.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
      r.target.empty() ? "cuda:90" : r.target, fn.signature().name, source, fn.signature().name);
}

void define_commands(CLI::App& app, Request& r) {
  app.set_version_flag("--version", version_text, "Print the versions of tritonrt, Triton, Python and the CUDA driver");
  app.require_subcommand(1);
  app.footer(kSignatureHelp);

  r.signature = app.add_subcommand("signature", "Show a kernel's parameters and decorators");
  r.signature->add_option("kernel", r.kernel, "SOURCE:KERNEL")->required();
  r.signature->add_flag("--json", r.json, "Print JSON");

  r.compile = app.add_subcommand("compile", "Compile one call and show what it compiled to");
  r.compile->add_option("kernel", r.kernel, "SOURCE:KERNEL")->required();
  r.compile->add_option("--signature", r.signature_text, "The call's arguments (ARGS below)")
      ->required()
      ->type_name("ARGS");
  r.compile->add_option("--target", r.target, "cuda:90, cuda:80, hip:gfx942, ... (default: the current GPU)")
      ->type_name("T");
  r.compile->add_option("-o,--output", r.output, "Write the binary and Triton's metadata into DIR")->type_name("DIR");
  r.compile->add_flag("--json", r.json, "Print JSON");
  add_compile_options(*r.compile, r.options);

  r.bundle = app.add_subcommand("bundle", "Create or list bundles of compiled kernels");
  r.bundle->require_subcommand(1);
  r.bundle_create = r.bundle->add_subcommand("create", "Pack compiled kernels into OUT.trb");
  r.bundle_create->add_option("out", r.bundle_file, "OUT.trb")->required();
  r.bundle_create->add_option("--kernel", r.kernels, "Only this kernel: SOURCE:KERNEL (or module:kernel, or KERNEL)")
      ->type_name("SOURCE:KERNEL");
  r.bundle_create->add_option("--target", r.targets, "Only these targets, comma-separated")->type_name("T,T...");
  r.bundle_create->add_option("--hash", r.hashes, "Only artifacts of this Triton hash")->type_name("H");
  r.bundle_create->add_option("--calls", r.calls, "Compile the calls of CALLS.json first, and pack those")
      ->type_name("CALLS.json");
  r.bundle_create
      ->add_option("--depfile", r.depfile,
                   "Also write DEPFILE: the bundle's dependencies (its kernels' source files, "
                   "Triton's version file, CALLS.json) as a Makefile rule, for build systems")
      ->type_name("DEPFILE");
  r.bundle_create->footer(kCallsHelp);
  r.bundle_list =
      r.bundle->add_subcommand("list", "Show what FILE.trb holds, or the bundles a program or library embeds");
  r.bundle_list->add_option("file", r.bundle_file, "FILE.trb, or an ELF program or shared library")->required();
  r.bundle_list->add_flag("--json", r.json, "Print JSON");
  r.bundle_list->add_flag("--verify", r.verify, "Also check every kernel's entry and binary against its checksum");

  r.header = app.add_subcommand("header", "Write a C++ header with one typed launch function per call of CALLS.json");
  r.header->add_option("calls", r.calls, "CALLS.json")->required();
  r.header->add_option("-o,--output", r.output, "Write it to FILE (default: standard output)")->type_name("FILE");
  r.header->add_option("--namespace", r.name_space, "The functions' C++ namespace (default: kernels)")->type_name("NS");
  r.header->footer(kHeaderHelp);
}

// A word where a command belongs must be one, and an option the command line does not have
// is named (CLI11 would first say that a required argument is missing).
void check_words(int argc, char** argv, const CLI::App& app, const Request& r) {
  const auto check_command = [&](int at, const CLI::App& parent) {
    if (argc <= at || argv[at][0] == '-') return;
    std::string known;
    for (const auto* sub : parent.get_subcommands([](const CLI::App*) { return true; })) {
      if (sub->get_name() == argv[at]) return;
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    usage_error("unknown command '" + std::string(argv[at]) + "' (" + known + ")");
  };
  check_command(1, app);
  if (argc > 1 && std::string_view(argv[1]) == "bundle") check_command(2, *r.bundle);
}

// The current GPU's target, for `compile` without --target.
tritonrt::Target current_target() {
  try {
    return tritonrt::Target::current();
  } catch (const tritonrt::DriverError& e) {
    tritonrt::detail::raise<tritonrt::TargetError>(
        {},
        "no --target given, and no GPU to compile for ({}); to compile without a GPU, pass --target, e.g. "
        "--target cuda:90 or --target hip:gfx942",
        tritonrt::detail::without_prefix(e.what()));
  }
}

// Runs what `r` asks for; results are written to `out`.
void run(const Request& r, std::ostream& out) {
  // Paths given relative to where the command runs stay so, whatever a kernel module does to
  // the working folder while it is imported.
  const auto anchored = [](const std::string& path) {
    std::error_code ec;
    return path.empty() ? path : std::filesystem::absolute(path, ec).string();
  };
  const std::string output = anchored(r.output), bundle_file = anchored(r.bundle_file), calls = anchored(r.calls),
                    depfile = anchored(r.depfile);
  if (*r.signature || *r.compile) {
    const auto [source, name] = kernel_argument(r.kernel);
    if (names_a_module(source)) search_current_folder_first();
    tritonrt::cli::SignatureStorage storage;
    const auto args = *r.compile ? parse_call(r.signature_text, storage, "") : std::vector<tritonrt::Arg>{};
    if (*r.compile && r.compile->count("--target") > 0 && r.target.empty()) {
      usage_error("--target needs a target (cuda:90, hip:gfx942, ...); leave it out for the current GPU");
    }
    auto& fn = tritonrt::JitFunction::get(source, name);
    if (*r.signature) return tritonrt::cli::print_signature(out, fn.signature(), r.json);
    std::optional<tritonrt::Target> target;
    if (!r.target.empty()) target = tritonrt::Target::parse(r.target);
    if (is_autotuned(fn)) autotuned(fn, source, r);
    if (!target) target = current_target();
    const auto artifact = fn.compile_packed(*target, r.options, args);
    const auto written = output.empty() ? std::vector<std::filesystem::path>{} : write_artifact(*artifact, output);
    return tritonrt::cli::print_compile(out, fn, *artifact, written, r.json);
  }
  if (*r.header) {
    const auto parsed = tritonrt::cli::read_calls(calls);
    if (std::any_of(parsed.begin(), parsed.end(), [](const auto& call) { return names_a_module(call.source); })) {
      search_current_folder_first();
    }
    const std::string text = tritonrt::cli::typed_header(parsed, r.calls, r.name_space);
    if (output.empty()) {
      out << text;
    } else if (const std::string why = tritonrt::detail::write_whole_file(output, text); !why.empty()) {
      tritonrt::detail::raise<tritonrt::ArtifactError>({}, "cannot write the header {}: {}", output, why);
    }
    return;
  }
  if (*r.bundle_list) {
    const auto check = r.verify ? tritonrt::BundleCheck::everything : tritonrt::BundleCheck::table;
    if (tritonrt::cli::is_elf(bundle_file)) {
      return tritonrt::cli::print_embedded(out, bundle_file, tritonrt::read_embedded_bundles(bundle_file, check),
                                           r.json);
    }
    return tritonrt::cli::print_bundle(out, tritonrt::read_bundle(bundle_file, check), r.json);
  }
  tritonrt::BundleFilter filter;
  filter.kernels = r.kernels;
  filter.hashes = r.hashes;
  for (const auto& list : r.targets) {
    for (auto& t : parse_targets(list)) filter.targets.push_back(std::move(t));
  }
  tritonrt::cli::create_bundle_command(out, bundle_file, std::move(filter), calls, depfile);
}

// The results reach the real standard output only at the end, whole: while a command runs,
// file descriptor 1 is standard error, so that nothing a kernel module, Triton or the
// compiler prints mixes into them (--json stays JSON).
class Results {
 public:
  // The copy of standard output is close-on-exec (a child of a kernel module must not hold it
  // open) and above 2. With standard error closed, /dev/null stands in for it (Python and
  // Triton write to it), so what is printed meanwhile goes nowhere rather than into the results.
  Results() : fd_(::fcntl(1, F_DUPFD_CLOEXEC, 3)) {
    if (fd_ < 0) return;
    if (::fcntl(2, F_GETFD) == -1) {
      if (const int null = ::open("/dev/null", O_WRONLY); null >= 0 && null != 2) {
        ::dup2(null, 2);
        ::close(null);
      }
    }
    ::dup2(2, 1);
  }
  ~Results() {
    if (fd_ >= 0) ::close(fd_);
  }
  Results(const Results&) = delete;
  Results& operator=(const Results&) = delete;

  std::ostringstream text;

  /// Writes the results out; "" or why they could not be written.
  std::string deliver() const {
    const std::string bytes = text.str();
    if (bytes.empty()) return "";
    if (fd_ < 0) return "standard output is closed";
    for (std::size_t done = 0; done < bytes.size();) {
      const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::error_code(errno, std::generic_category()).message();
      done += static_cast<std::size_t>(n);
    }
    return "";
  }

 private:
  int fd_;
};

// Exit status `code`, or 1 when what was printed on standard output did not get there.
int checked_stdout(int code) {
  std::cout.flush();
  if (std::cout) return code;
  std::cerr << "tritonrt: could not write to standard output\n";
  return 1;
}

// Whether the command line asks for JSON: looked for in the words themselves too, since a
// command line CLI11 refused sets no flag.
bool wants_json(int argc, char** argv, const Request& r) {
  if (r.json) return true;
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word == "--") return false;
    if (word == "--json") return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Inspect, compile and bundle @triton.jit kernels, as tritonrt runs them from C++.", "tritonrt"};
  Request request;
  define_commands(app, request);
  std::optional<Results> results;  // once the command runs
  // A failure: its message on stderr, and with --json also as JSON on stdout.
  const auto failed = [&](const std::exception& e, const std::string& message, const char* hint, int code) {
    std::cerr << message << "\n" << hint;
    if (!wants_json(argc, argv, request)) return code;
    const std::string text = tritonrt::cli::error_json(
        dynamic_cast<const UsageError*>(&e) != nullptr ? "UsageError" : tritonrt::cli::error_kind(e), message, code);
    if (results) {
      results->text.str(text);
      if (const std::string why = results->deliver(); !why.empty()) {
        std::cerr << "tritonrt: could not write the error to standard output: " << why << "\n";
        return 1;  // as for any failed write to stdout
      }
      return code;
    }
    std::cout << text;
    return checked_stdout(code);
  };
  try {
    check_words(argc, argv, app, request);
    try {
      app.parse(argc, argv);
    } catch (const CLI::Success& e) {  // --help, --version
      return checked_stdout(app.exit(e));
    } catch (const CLI::ParseError& e) {
      // An option no command has is named, whatever CLI11 noticed first.
      for (const auto& extra : app.remaining(true)) {
        if (extra.starts_with("-")) usage_error("unknown option '" + extra + "'");
      }
      usage_error(e.what());
    }
    results.emplace();
    run(request, results->text);
    if (const std::string why = results->deliver(); !why.empty()) {
      std::cerr << "tritonrt: could not write the results to standard output: " << why << "\n";
      return 1;
    }
    return 0;
  } catch (const UsageError& e) {
    return failed(e, std::string("tritonrt: ") + e.what(), "(run 'tritonrt --help', or 'tritonrt COMMAND --help')\n",
                  2);
  } catch (const tritonrt::cli::CallsError& e) {
    return failed(e, e.what(), "(run 'tritonrt bundle create --help')\n", 2);
  } catch (const tritonrt::Error& e) {
    return failed(e, e.what(), "", 1);
  } catch (const std::exception& e) {
    return failed(e, std::string("tritonrt: ") + e.what(), "", 1);
  }
}

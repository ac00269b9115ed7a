#include "bundle_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <set>
#include <system_error>
#include <utility>
#include <vector>

#include "calls.h"
#include "command_support.h"
#include "report.h"
#include "common/errors.h"
#include "common/record_key.h"
#include "store/files.h"
#include "store/kernel_names.h"
#include "tritonrt/tritonrt.h"

namespace tritonrt::cli {
namespace {

// A Makefile rule "BUNDLE: DEPENDENCIES" (spaces, '#' and '$' escaped as Make and Ninja read
// them): what a build that makes the bundle must redo it for.
void write_depfile(const std::string& depfile, const std::filesystem::path& bundle, const tritonrt::BundleInfo& info,
                   const std::string& calls_file) {
  const auto escaped = [](const std::string& path) {
    std::string out;
    for (const char c : path) {
      if (c == ' ' || c == '#') out += '\\';
      if (c == '$') out += '$';
      out += c;
    }
    return out;
  };
  std::set<std::string> files;
  if (!calls_file.empty()) files.insert(std::filesystem::absolute(calls_file).lexically_normal().string());
  for (const auto& kernel : info.kernels) files.insert(kernel.files.begin(), kernel.files.end());
  std::string text = escaped(bundle.string()) + ":";
  for (const auto& f : files) text += " \\\n  " + escaped(f);
  if (const std::string why = tritonrt::detail::write_whole_file(depfile, text + "\n"); !why.empty()) {
    tritonrt::detail::raise<tritonrt::ArtifactError>({}, "cannot write the dependency file {}: {}", depfile, why);
  }
}

}  // namespace

bool is_elf(const std::filesystem::path& path) {
  // Read as every file tritonrt reads: a FIFO or device is not opened for reading here.
  const tritonrt::detail::InputFile in(path);
  if (!in.error().empty()) return false;
  const auto magic = in.read(0, 4);
  return magic && *magic == std::string_view(
                                "\x7f"
                                "ELF",
                                4);
}

void create_bundle_command(std::ostream& out, const std::filesystem::path& file, BundleFilter filter,
                           const std::string& calls_file, const std::string& depfile) {
  // Before anything is compiled: the bundle must be able to go where it is asked to.
  if (const std::string problem = tritonrt::detail::output_problem(file); !problem.empty()) {
    tritonrt::detail::raise<tritonrt::ArtifactError>({}, "cannot create the bundle {}: {}", file.string(), problem);
  }
  std::vector<std::pair<std::string, std::string>> calls_made;  // source, kernel
  if (!calls_file.empty()) {
    if (filter.targets.empty()) usage_error("bundle create --calls needs --target");
    if (!filter.kernels.empty() || !filter.hashes.empty()) usage_error("--calls takes no --kernel or --hash");
    // The calls compile into the index, which the bundle is packed from: a call a loaded
    // bundle served would never get there.
    if (const char* loaded = std::getenv("TRITONRT_BUNDLE"); loaded != nullptr && *loaded != '\0') {
      tritonrt::detail::raise<tritonrt::ArtifactError>(
          {},
          "cannot create the bundle {} with --calls while TRITONRT_BUNDLE is set ({}): a call its bundles hold "
          "would be served from them and never recorded in the index the bundle is packed from; unset it",
          file.string(), loaded);
    }
    const auto calls = tritonrt::cli::read_calls(calls_file);
    // A module named in the calls file is found from the current folder first, as on the
    // command line (the entry `compile` suggests for an autotuned kernel may name one).
    if (std::any_of(calls.begin(), calls.end(), [](const auto& call) { return names_a_module(call.source); })) {
      search_current_folder_first();
    }
    for (const auto& call : calls) calls_made.emplace_back(call.source, call.name);
    const std::size_t total = calls.size() * filter.targets.size();
    std::size_t done = 0;
    for (const auto& call : calls) {
      tritonrt::cli::SignatureStorage storage;
      const auto args = parse_call(call.signature, storage, calls_file + ", " + call.name + ": ");
      auto& fn = tritonrt::JitFunction::get(call.source, call.name);
      filter.kernels.push_back(call.source + ":" + call.name);
      const bool tuned = is_autotuned(fn);
      for (const auto& target : filter.targets) {
        const auto start = std::chrono::steady_clock::now();
        std::size_t artifacts = 0;
        if (tuned) {
          for (const auto& config : fn.compile_configs_packed(target, call.options, args)) {
            if (!config.artifact)
              tritonrt::detail::raise<tritonrt::CompileError>({call.name}, "config {}: {}", config.config,
                                                              tritonrt::detail::without_prefix(config.error));
            filter.artifacts.emplace_back(call.source + ":" + call.name, config.artifact->key);
            ++artifacts;
          }
        } else {
          filter.artifacts.emplace_back(call.source + ":" + call.name,
                                        fn.compile_packed(target, call.options, args)->key);
          artifacts = 1;
        }
        const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
        std::fprintf(stderr, "[%zu/%zu] %s for %s: %zu artifact%s (%.1f s)\n", ++done, total, call.name.c_str(),
                     target.str().c_str(), artifacts, artifacts == 1 ? "" : "s", took.count());
      }
    }
  }
  const auto info = tritonrt::create_bundle(file, filter);
  // Every call compiled must be in the bundle: a kernel the index did not record (what it was
  // made from could not all be observed, or its file changed meanwhile) fails the command, and
  // so does an artifact the index did not get (served by a loaded bundle, or not written).
  const auto fail = [&](const std::string& kernel, const std::string& source, const std::string& what) {
    std::error_code ec;
    std::filesystem::remove(file, ec);
    std::string why;
    for (const auto& line : info.skipped) why += "; skipped " + line;
    tritonrt::detail::raise<tritonrt::ArtifactError>(
        {kernel},
        "of '{}'{} was compiled but is not in the index to bundle{} (TRITONRT_LOG=info says why it was not "
        "recorded); no bundle was written",
        source, what, why);
  };
  for (const auto& call : calls_made) {  // no structured bindings: lambdas capture them (clang 14)
    const std::string &source = call.first, &name = call.second;
    if (std::none_of(info.kernels.begin(), info.kernels.end(), [&](const tritonrt::BundleKernel& k) {
          return tritonrt::detail::names_kernel(source + ":" + name, k.source, k.name);
        })) {
      fail(name, source, "");
    }
  }
  for (const auto& artifact : filter.artifacts) {
    const std::string &kernel = artifact.first, &key = artifact.second;
    const bool packed = std::any_of(info.kernels.begin(), info.kernels.end(), [&](const tritonrt::BundleKernel& k) {
      return tritonrt::detail::names_kernel(kernel, k.source, k.name) &&
             std::any_of(k.held.begin(), k.held.end(), [&](const tritonrt::BundleArtifact& a) {
               return tritonrt::detail::RecordKey::artifact(a.target, a.options, a.specialization).text() == key;
             });
    });
    if (!packed) {
      const auto colon = kernel.rfind(':');
      fail(kernel.substr(colon + 1), kernel.substr(0, colon),
           ": its artifact (" + tritonrt::detail::artifact_words(key) + ")");
    }
  }
  if (!depfile.empty()) write_depfile(depfile, file, info, calls_file);
  for (const auto& line : info.skipped) std::cerr << "tritonrt: skipped " << line << "\n";
  tritonrt::cli::print_bundle(out, info, false);
}

}  // namespace tritonrt::cli

#include "store/bundle.h"

#include <dlfcn.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <system_error>

#include "common/errors.h"
#include "common/json.h"
#include "common/log.h"
#include "common/record_key.h"
#include "common/sha256.h"
#include "store/elf.h"
#include "store/files.h"
#include "store/index.h"
#include "store/kernel_names.h"
#include "store/mapped_bundle.h"
#include "store/module_search.h"
#include "store/triton_cache.h"
#include "tritonrt/bundle.h"

namespace tritonrt::detail {
namespace {

BundleInfo describe(const MappedBundle& bundle) {
  BundleInfo info;
  info.path = bundle.path();
  info.created_by = bundle.created_by();
  info.bytes = bundle.size();
  for (const auto& k : bundle.kernels()) {
    info.kernels.push_back({k->identity,
                            k->source,
                            k->name,
                            k->targets,
                            k->artifact_count,
                            k->choice_count,
                            k->heuristic_count,
                            k->hook_count,
                            k->bytes,
                            {},
                            {}});
    for (const auto& [path, sha] : k->files) info.kernels.back().files.push_back(path);  // read: complete
    for (const auto& [key, hash] : k->held) {
      const auto parsed = RecordKey::parse(key);
      const std::string_view rest = parsed ? std::string_view(parsed->rest) : std::string_view(key);
      const auto bar = rest.find('|');
      info.kernels.back().held.push_back({parsed ? parsed->target : std::string(),
                                          std::string(rest.substr(0, bar)),
                                          bar == std::string_view::npos ? std::string() : std::string(rest.substr(bar + 1)),
                                          hash});
    }
  }
  return info;
}

// The process's loaded bundles, in load order, and their kernels by identity, in load order
// (the first whose sources hold is used).
struct LoadedBundles {
  std::mutex mutex;
  std::vector<std::unique_ptr<MappedBundle>> bundles;
  std::map<std::string, std::vector<MappedKernel*>, std::less<>> kernels;
  bool environment_read = false;
  std::string environment_error;  ///< why TRITONRT_BUNDLE's bundles could not be loaded
  // The program's embedded bundles: registered before main() (by the code
  // tritonrt_add_kernels generates), read at the first lookup, before TRITONRT_BUNDLE's.
  struct Embedded {
    std::string_view bytes;
    std::string name;
  };
  std::vector<Embedded> embedded;
  std::size_t embedded_read = 0;  ///< how many of `embedded` were read
  std::string embedded_error;     ///< why one could not be

  static LoadedBundles& get() {
    static LoadedBundles* const loaded = new LoadedBundles;  // kernels point into it until exit
    return *loaded;
  }

  // With `mutex` held.
  const MappedBundle& load(const std::filesystem::path& path) {
    std::error_code ec;
    const auto canonical = std::filesystem::weakly_canonical(path, ec);
    for (const auto& b : bundles) {
      if (b->path() == (ec ? path : canonical)) return *b;
    }
    return add(std::make_unique<MappedBundle>(ec ? path : canonical));
  }

  // With `mutex` held: the embedded bundles registered since the last call, unless
  // TRITONRT_EMBEDDED_BUNDLES=off.
  void load_embedded() {
    if (embedded_read == embedded.size()) return;
    if (!environment_switch("TRITONRT_EMBEDDED_BUNDLES", true)) {
      if (embedded_read == 0) log(LogLevel::info, "TRITONRT_EMBEDDED_BUNDLES=off: the program's bundles are not used");
      embedded_read = embedded.size();
      return;
    }
    for (; embedded_read < embedded.size(); ++embedded_read) {
      const Embedded& e = embedded[embedded_read];
      try {
        add(std::make_unique<MappedBundle>(e.name, e.bytes));
      } catch (const Error& error) {
        embedded_error += (embedded_error.empty() ? "" : "; ") + without_prefix(error.what());
      }
    }
  }

  // With `mutex` held.
  const MappedBundle& add(std::unique_ptr<MappedBundle> bundle) {
    for (const auto& kernel : bundle->kernels()) {
      auto& held = kernels[kernel->identity];
      if (!held.empty()) {
        log_about(LogLevel::info, {kernel->name},
                  "is in the bundles {} and {}: the first one's whose sources hold here is used", held.front()->where(),
                  bundle->path().string());
      }
      held.push_back(kernel.get());
    }
    log(LogLevel::info, "loaded the bundle {} ({} kernel{}, {} bytes)", bundle->path().string(),
        bundle->kernels().size(), bundle->kernels().size() == 1 ? "" : "s", bundle->size());
    bundles.push_back(std::move(bundle));
    return *bundles.back();
  }

  // With `mutex` held: TRITONRT_BUNDLE's bundles, once per process.
  void load_environment() {
    if (environment_read) return;
    environment_read = true;
    const char* list = std::getenv("TRITONRT_BUNDLE");
    if (list == nullptr) return;
    std::string_view rest(list);
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      const std::string path(rest.substr(0, colon));
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
      if (path.empty()) continue;
      try {
        load(path);
      } catch (const Error& e) {
        // Every bundle that failed is named, not only the last.
        environment_error += (environment_error.empty() ? "TRITONRT_BUNDLE: " : "; ") + without_prefix(e.what());
      }
    }
  }
};

// Where Python would look for a module here: PYTHONPATH's folders, then those the bundled
// kernel's import searched (its description's search path), as far as tritonrt can tell
// without Python.
std::vector<std::string> module_search_path(const MappedKernel& kernel) {
  const char* list = std::getenv("PYTHONPATH");
  std::vector<std::string> folders = search_path_folders(list != nullptr ? list : "");
  try {
    const auto description = nlohmann::json::parse(kernel.description);
    if (const auto it = description.find("search_path"); it != description.end() && it->is_array()) {
      for (const auto& folder : *it) {
        if (folder.is_string()) folders.push_back(folder.get<std::string>());
      }
    }
  } catch (const nlohmann::json::exception&) {
    // A description tritonrt cannot read is refused where it is used; here it adds no folder.
  }
  return folders;
}

// Whether a file tritonrt can read here says the bundled kernel was compiled from other
// sources: the kernel's own .py file as given, or a recorded file still at its path.
std::optional<std::string> stale_because(const MappedKernel& kernel, std::string_view source) {
  struct Check {
    std::string path, sha256, what;  ///< `what` names the file in the message
  };
  std::vector<Check> checks;
  const auto quoted = [](const std::string& path) { return "'" + path + "'"; };
  if (source.ends_with(".py") && !kernel.files.empty()) {
    checks.push_back({std::string(source), kernel.files.front().second, quoted(std::string(source))});
  }
  // A kernel named by module: the file an import of it would find here (PYTHONPATH's folders,
  // then those its import searched where it was bundled) must be the one it was bundled from.
  if (!source.ends_with(".py") && !kernel.files.empty()) {
    if (const auto found = find_module_file(source, module_search_path(kernel))) {
      checks.push_back({*found, kernel.files.front().second,
                        "'" + std::string(source) + "', which would be imported from " + quoted(*found) + ","});
    }
  }
  for (const auto& [path, sha] : kernel.files) {
    // Triton's own record (or, from older indexes, its version file): another Triton here does
    // not change what was compiled.
    const std::string folder = std::filesystem::path(path).parent_path().filename().string();
    const bool triton = path.ends_with("/triton/__init__.py") ||
                        (folder.starts_with("triton-") && folder.ends_with(".dist-info"));
    if (!triton) checks.push_back({path, sha, quoted(path)});
  }
  for (const auto& check : checks) {
    std::error_code ec;
    // Folders a module listed are checked by the index; a bundle checks the files that are here.
    if (!std::filesystem::exists(check.path, ec) || std::filesystem::is_directory(check.path, ec)) continue;
    std::string why;
    const auto bytes = read_file(check.path, kMaxTextBytes, why);
    if (!bytes) return quoted(check.path) + " " + why;
    if (sha256_hex(*bytes) != check.sha256) return check.what + " differs from the source it was bundled from";
  }
  return std::nullopt;
}

}  // namespace

const MappedKernel* find_bundled(std::string_view source, std::string_view name, std::string& why) {
  auto& loaded = LoadedBundles::get();
  std::lock_guard lock(loaded.mutex);
  loaded.load_embedded();
  loaded.load_environment();
  if (!loaded.embedded_error.empty()) raise<ArtifactError>({name}, loaded.embedded_error);
  if (!loaded.environment_error.empty()) raise<ArtifactError>({name}, loaded.environment_error);
  if (loaded.bundles.empty()) return nullptr;
  const std::string identity = bundle_identity(source, name);
  const auto it = loaded.kernels.find(identity);
  if (it == loaded.kernels.end()) {
    // What they hold instead, kernels of the same name first: a module named otherwise than
    // the bundle has it is the usual slip.
    std::vector<std::string_view> held;
    const std::string suffix = ":" + std::string(name);
    for (const bool same_name : {true, false}) {
      for (const auto& [other, entries] : loaded.kernels) {
        if (std::string_view(other).ends_with(suffix) == same_name) held.push_back(other);
      }
    }
    constexpr std::size_t kShown = 8;
    why = "no loaded bundle holds " + identity + " (a kernel is found by its file's or module's last name and its "
          "own; they hold ";
    for (std::size_t i = 0; i < held.size() && i < kShown; ++i) why += (i ? ", " : "") + std::string(held[i]);
    why += held.size() > kShown ? fmt::format(" and {} more)", held.size() - kShown) : std::string(")");
    return nullptr;
  }
  // A bundle whose entry was made from other sources does not stop the search of the next.
  std::string stale_reasons;
  for (MappedKernel* kernel : it->second) {
    kernel->bundle->complete(*kernel);
    const auto stale = stale_because(*kernel, source);
    if (!stale) return kernel;
    const std::string reason = "the bundle " + kernel->where() + " is not used for it: " + *stale;
    log_about(LogLevel::warning, {name}, "{}", reason);
    stale_reasons += (stale_reasons.empty() ? "" : "; ") + reason;
  }
  why = stale_reasons;
  return nullptr;
}

Target metadata_target(const MappedKernel& kernel, const std::string& key, const MappedKernel::Binary& binary) {
  try {
    return KernelMetadata::parse(binary.metadata).target;
  } catch (const ArtifactError& e) {
    raise<ArtifactError>({kernel.name},
                         "the bundle {} is damaged: its artifact for {} has metadata tritonrt cannot use: {}",
                         kernel.where(), key, without_prefix(e.what()));
  }
}

std::optional<Artifact> bundled_artifact(const MappedKernel& kernel, const std::string& key, const Target& target) {
  const auto it = kernel.artifacts.find(key);
  if (it == kernel.artifacts.end()) return std::nullopt;
  const auto& binary = it->second;
  const auto fail = [&](const std::string& why) {
    raise<ArtifactError>({kernel.name}, "the bundle {} is damaged: its artifact for {} {}", kernel.where(), key, why);
  };
  Artifact artifact;
  // Copied before it is checked: a bundle rewritten in place (rather than replaced by a
  // rename) cannot slip unchecked bytes in between.
  artifact.binary.assign(kernel.bundle->bytes(binary.offset, binary.size));
  if (sha256_hex(artifact.binary) != binary.sha256) fail("does not match its checksum");
  try {
    artifact.metadata = KernelMetadata::parse(binary.metadata);
  } catch (const ArtifactError& e) {
    fail("has metadata tritonrt cannot use: " + without_prefix(e.what()));
  }
  artifact.binary_kind = binary.binary_kind;
  artifact.cache_dir = kernel.where();
  if (const auto problem = artifact_problem(artifact, target)) fail("is not usable: " + *problem);
  return artifact;
}

// Every kernel's entry and binary against its checksum and target (BundleCheck::everything).
void check_everything(const MappedBundle& bundle) {
  for (const auto& kernel : bundle.kernels()) {
    bundle.complete(*kernel);
    for (const auto& [key, binary] : kernel->artifacts) {
      const Target target = metadata_target(*kernel, key, binary);
      bundled_artifact(*kernel, key, target);
    }
  }
}

}  // namespace tritonrt::detail

namespace tritonrt {

BundleInfo read_bundle(const std::filesystem::path& path, BundleCheck check) {
  detail::MappedBundle bundle(path);
  if (check == BundleCheck::everything) detail::check_everything(bundle);
  return detail::describe(bundle);
}

BundleInfo load_bundle(const std::filesystem::path& path) {
  auto& loaded = detail::LoadedBundles::get();
  std::lock_guard lock(loaded.mutex);
  return detail::describe(loaded.load(path));
}

void register_embedded_bundle(const void* bytes, std::size_t size, const char* name) noexcept {
  try {
    auto& loaded = detail::LoadedBundles::get();
    std::lock_guard lock(loaded.mutex);
    const std::string_view view(static_cast<const char*>(bytes), size);
    for (const auto& e : loaded.embedded) {
      if (e.bytes.data() == view.data()) return;  // one object registering twice
    }
    loaded.embedded.push_back({view, name});
    // Its kernels may be got after the library holding it is unloaded: that library stays
    // mapped for the process's life (a program's own bundle needs nothing).
    if (Dl_info info{}; ::dladdr(bytes, &info) != 0 && info.dli_fname != nullptr) {
      (void)::dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);  // never closed: that is the point
    }
  } catch (...) {
    // Out of memory before main(): the bundle is not available, and getting its kernels
    // says what is missing (nothing may throw out of a static initializer).
  }
}

std::vector<BundleInfo> embedded_bundles() {
  auto& loaded = detail::LoadedBundles::get();
  std::lock_guard lock(loaded.mutex);
  loaded.load_embedded();
  if (!loaded.embedded_error.empty()) detail::raise<ArtifactError>({}, loaded.embedded_error);
  std::vector<BundleInfo> out;
  for (const auto& e : loaded.embedded) {
    for (const auto& b : loaded.bundles) {
      if (b->path() == e.name) out.push_back(detail::describe(*b));
    }
  }
  return out;
}

std::vector<BundleInfo> read_embedded_bundles(const std::filesystem::path& binary, BundleCheck check) {
  const detail::MappedElf elf(binary);
  const std::string_view section = elf.section(detail::kEmbeddedSection);
  std::vector<BundleInfo> out;
  for (const auto& [offset, bytes] : detail::embedded_records(section, binary.string(), &elf)) {
    detail::MappedBundle bundle(binary.string() + " (embedded bundle " + std::to_string(out.size() + 1) + ")", bytes);
    if (check == BundleCheck::everything) detail::check_everything(bundle);
    out.push_back(detail::describe(bundle));
  }
  return out;
}

}  // namespace tritonrt

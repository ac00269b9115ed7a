#include "store/bundle.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
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
#include "store/module_search.h"
#include "store/triton_cache.h"
#include "tritonrt/bundle.h"
#include "tritonrt/version.h"

namespace tritonrt::detail {

constexpr std::size_t kMaxHeader = 256;
constexpr std::size_t kMaxTable = std::size_t{256} << 20;  // a million kernels' lines

// A bundle file mapped read-only for the life of the object (or a bundle embedded in the
// program, read where it lies): its table parsed, its binaries where the table says.
class MappedBundle {
 public:
  /// A bundle embedded in the program (by tritonrt_add_kernels) or copied out of a binary;
  /// `bytes` outlive the object. `name` says where it is, for messages.
  MappedBundle(std::string name, std::string_view bytes) : path_(std::move(name)) {
    size_ = bytes.size();
    data_ = bytes.data();
    read_header(bytes.substr(0, std::min(size_, kMaxHeader)));
    read_table();
  }

  explicit MappedBundle(const std::filesystem::path& path) : path_(path) {
    const InputFile file(path);  // a FIFO or device is refused without being opened
    if (!file.error().empty()) raise<ArtifactError>({}, "the bundle {} {}", path.string(), file.error());
    size_ = static_cast<std::size_t>(file.size());
    // The header first, read on its own: nothing larger than it says is mapped or read.
    const auto head = file.read(0, std::min(size_, kMaxHeader));
    if (!head) damaged("it cannot be read");
    read_header(*head);
    std::string error;
    mapping_ = MappedFile(file, error);
    if (!error.empty()) raise<ArtifactError>({}, "the bundle {} {}", path.string(), error);
    data_ = mapping_.data();
    read_table();
  }
  MappedBundle(const MappedBundle&) = delete;
  MappedBundle& operator=(const MappedBundle&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::size_t size() const { return size_; }
  const std::string& created_by() const { return created_by_; }
  const std::vector<std::unique_ptr<MappedKernel>>& kernels() const { return kernels_; }
  std::string_view bytes(std::size_t offset, std::size_t size) const {
    return std::string_view(data_ + data_start_ + offset, size);
  }

  /// Reads `kernel`'s entry once (callers serialize): checked against its checksum, every
  /// binary it names within the file.
  void complete(MappedKernel& kernel) const {
    if (kernel.complete) return;
    // Copied before it is checked, so that what is read is what was checked.
    const std::string entry(bytes(kernel.entry_offset, kernel.entry_size));
    const auto fail = [&](const std::string& why) {
      raise<ArtifactError>({kernel.name}, "the bundle {} is damaged: its entry for {} {}", path_.string(),
                           kernel.identity, why);
    };
    if (sha256_hex(entry) != kernel.entry_sha256) fail("does not match its checksum");
    MappedKernel read;  // filled whole, then moved in: a failure leaves `kernel` as it was
    const JsonReader<ArtifactError> json({kernel.name},
                                         "the bundle " + path_.string() + "'s entry for " + kernel.identity);
    const auto list = [&](const nlohmann::json& object, const char* name) {
      auto value = json.field<nlohmann::json>(object, name);
      if (!value.is_array()) json.fail("field '" + std::string(name) + "' should be a list");
      return value;
    };
    const auto k = json.parse(entry);
    read.description = json.field<std::string>(k, "description");
    read.rules = json.field<std::string>(k, "rules");
    for (const auto& f : list(k, "files")) {
      if (!f.is_array() || f.size() != 2) json.fail("field 'files' should hold [path, sha256] pairs");
      read.files.emplace_back(json.as<std::string>(f[0], "files"), json.as<std::string>(f[1], "files"));
    }
    for (const auto& a : list(k, "artifacts")) {
      MappedKernel::Binary binary{json.field<std::string>(a, "binary_kind"), json.field<std::string>(a, "metadata"),
                                  json.field<std::size_t>(a, "offset"), json.field<std::size_t>(a, "size"),
                                  json.field<std::string>(a, "sha256")};
      if (!within(binary.offset, binary.size)) fail("names a binary past the file's end");
      if (binary.size > kMaxBinaryBytes) fail("names a binary larger than tritonrt reads");
      read.artifacts.emplace(json.field<std::string>(a, "key"), std::move(binary));
    }
    for (const auto& c : list(k, "choices")) {
      read.choices.emplace(json.field<std::string>(c, "key"),
                           std::make_pair(json.field<std::size_t>(c, "config"), json.field<std::string>(c, "text")));
    }
    const auto heuristics = json.field<nlohmann::json>(k, "heuristics");
    if (!heuristics.is_object()) json.fail("field 'heuristics' should be an object");
    for (const auto& [key, entries] : heuristics.items()) {
      if (!entries.is_array()) json.fail("field 'heuristics' should hold lists");
      auto& values = read.heuristics[key];
      for (const auto& value : entries) values.push_back(json.as<std::string>(value, "heuristics"));
    }
    kernel.description = std::move(read.description);
    kernel.rules = std::move(read.rules);
    kernel.files = std::move(read.files);
    kernel.artifacts = std::move(read.artifacts);
    kernel.choices = std::move(read.choices);
    kernel.heuristics = std::move(read.heuristics);
    kernel.complete = true;
  }

 private:
  bool within(std::size_t offset, std::size_t size) const {
    const std::size_t data_size = size_ - data_start_;
    return offset <= data_size && size <= data_size - offset;
  }

  [[noreturn]] void damaged(const std::string& why) const {
    raise<ArtifactError>({}, "the bundle {} is not a whole tritonrt bundle: {}", path_.string(), why);
  }

  // The header line at the start of `head`: format, the table's size (within the file and
  // the limit) and checksum.
  void read_header(std::string_view head) {
    const auto newline = head.find('\n');
    if (!head.starts_with(kBundleMagic) || newline == std::string_view::npos) {
      damaged("it does not start with a tritonrt-bundle header");
    }
    std::istringstream header{std::string(head.substr(0, newline))};
    std::string magic;
    int format = 0;
    if (!(header >> magic >> format >> table_size_ >> table_sha256_) || magic != kBundleMagic) {
      damaged("its header does not read");
    }
    if (format != kBundleFormat) {
      raise<ArtifactError>({},
                           "the bundle {} is in bundle format {}; this tritonrt ({}) reads format {}: create it again "
                           "with this tritonrt",
                           path_.string(), format, TRITONRT_VERSION, kBundleFormat);
    }
    if (table_size_ > kMaxTable) damaged("its header claims a table larger than tritonrt reads");
    if (table_size_ > size_ - (newline + 1)) damaged("it is shorter than its header says (cut short?)");
    data_start_ = newline + 1 + table_size_;
  }

  // The table, from the mapped file, checked against the header's checksum.
  void read_table() {
    const std::string_view table(data_ + data_start_ - table_size_, table_size_);
    if (sha256_hex(table) != table_sha256_) damaged("its table does not match its checksum");
    const JsonReader<ArtifactError> json({}, "the bundle " + path_.string() + "'s table");
    const auto j = json.parse(table);
    created_by_ = json.field<std::string>(j, "created_by");
    const auto kernels = json.field<nlohmann::json>(j, "kernels");
    if (!kernels.is_array()) json.fail("field 'kernels' should be a list");
    for (const auto& k : kernels) {
      auto kernel = std::make_unique<MappedKernel>();
      kernel->bundle = this;
      kernel->identity = json.field<std::string>(k, "identity");
      kernel->source = json.field<std::string>(k, "source");
      kernel->name = json.field<std::string>(k, "name");
      const auto targets = json.field<nlohmann::json>(k, "targets");
      if (!targets.is_array()) json.fail("field 'targets' should be a list");
      for (const auto& t : targets) kernel->targets.push_back(json.as<std::string>(t, "targets"));
      kernel->artifact_count = json.field<std::size_t>(k, "artifacts");
      const auto held = json.field<nlohmann::json>(k, "held");
      if (!held.is_array()) json.fail("field 'held' should be a list");
      for (const auto& a : held) {
        kernel->held.emplace_back(json.field<std::string>(a, "key"), json.field<std::string>(a, "hash"));
      }
      kernel->choice_count = json.field<std::size_t>(k, "choices");
      kernel->heuristic_count = json.field<std::size_t>(k, "heuristic_values");
      kernel->hook_count = json.field<std::size_t>(k, "hook_effects");
      kernel->bytes = json.field<std::size_t>(k, "bytes");
      const auto entry = json.field<nlohmann::json>(k, "entry");
      if (!entry.is_array() || entry.size() != 3) json.fail("field 'entry' should be [offset, size, sha256]");
      kernel->entry_offset = json.as<std::size_t>(entry[0], "entry");
      kernel->entry_size = json.as<std::size_t>(entry[1], "entry");
      kernel->entry_sha256 = json.as<std::string>(entry[2], "entry");
      if (!within(kernel->entry_offset, kernel->entry_size)) {
        damaged("the entry of " + kernel->identity + " lies past its end (cut short?)");
      }
      if (kernel->entry_size > kMaxTextBytes)
        damaged("the entry of " + kernel->identity + " is larger than tritonrt reads");
      kernels_.push_back(std::move(kernel));
    }
  }

  std::filesystem::path path_;
  MappedFile mapping_;           ///< a bundle file's bytes (an embedded bundle's are the program's)
  const char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t data_start_ = 0;  ///< where the data (entries and binaries) starts
  std::size_t table_size_ = 0;
  std::string table_sha256_;
  std::string created_by_;
  std::vector<std::unique_ptr<MappedKernel>> kernels_;
};

std::string MappedKernel::where() const { return bundle->path().string(); }

std::string MappedKernel::artifact_list() const {
  constexpr std::size_t kShown = 16;  // a message, not a listing: `bundle list` shows them all
  std::string out;
  for (std::size_t i = 0; i < held.size() && i < kShown; ++i) {
    out += (out.empty() ? "" : "; ") + artifact_words(held[i].first);
  }
  if (held.size() > kShown) {
    out += "; and " + std::to_string(held.size() - kShown) + " more (tritonrt bundle list shows them)";
  }
  return out.empty() ? "nothing" : out;
}

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

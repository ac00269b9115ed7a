#include "store/mapped_bundle.h"

#include <algorithm>
#include <sstream>

#include "common/errors.h"
#include "common/json.h"
#include "common/record_key.h"
#include "common/sha256.h"
#include "tritonrt/version.h"

namespace tritonrt::detail {

constexpr std::size_t kMaxHeader = 256;
constexpr std::size_t kMaxTable = std::size_t{256} << 20;  // a million kernels' lines

MappedBundle::MappedBundle(std::string name, std::string_view bytes) : path_(std::move(name)) {
  size_ = bytes.size();
  data_ = bytes.data();
  read_header(bytes.substr(0, std::min(size_, kMaxHeader)));
  read_table();
}

MappedBundle::MappedBundle(const std::filesystem::path& path) : path_(path) {
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

void MappedBundle::complete(MappedKernel& kernel) const {
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

bool MappedBundle::within(std::size_t offset, std::size_t size) const {
  const std::size_t data_size = size_ - data_start_;
  return offset <= data_size && size <= data_size - offset;
}

void MappedBundle::damaged(const std::string& why) const {
  raise<ArtifactError>({}, "the bundle {} is not a whole tritonrt bundle: {}", path_.string(), why);
}

// The header line at the start of `head`: format, the table's size (within the file and
// the limit) and checksum.
void MappedBundle::read_header(std::string_view head) {
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
void MappedBundle::read_table() {
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

}  // namespace tritonrt::detail

#include "store/triton_cache.h"

#include "common/errors.h"
#include "common/sha256.h"
#include "store/files.h"
#include "store/index.h"

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace tritonrt::detail {
namespace {

constexpr std::uint16_t kMachineCuda = 190;    // EM_CUDA
constexpr std::uint16_t kMachineAmdgpu = 224;  // EM_AMDGPU
constexpr std::uint32_t kSectionNoBits = 8;    // SHT_NOBITS: occupies no file space

template <class T>
T read_le(const std::string& bytes, std::size_t offset) {
  T value{};
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;  // ELF64 little-endian, the only kind either backend produces
}

// A 64-bit little-endian ELF image whose program and section tables, and every section's
// contents, lie inside it: a cut, empty or foreign file fails here before the driver sees it.
std::optional<std::string> elf_problem(const std::string& b, std::uint16_t machine) {
  constexpr std::size_t kHeader = 64;
  if (b.empty()) return "the binary is empty";
  if (b.size() < kHeader || std::memcmp(b.data(),
                                        "\x7f"
                                        "ELF",
                                        4) != 0)
    return "the binary is not an ELF image";
  if (b[4] != 2 || b[5] != 1) return "the binary is not a 64-bit little-endian ELF image";
  const auto found = read_le<std::uint16_t>(b, 18);
  if (found != machine) {
    return "the binary is for ELF machine " + std::to_string(found) + ", expected " + std::to_string(machine);
  }
  const auto ph_offset = read_le<std::uint64_t>(b, 0x20);
  const auto sh_offset = read_le<std::uint64_t>(b, 0x28);
  const auto ph_size = read_le<std::uint16_t>(b, 0x36);
  const auto ph_count = read_le<std::uint16_t>(b, 0x38);
  const auto sh_size = read_le<std::uint16_t>(b, 0x3a);
  const auto sh_count = read_le<std::uint16_t>(b, 0x3c);
  auto inside = [&](std::uint64_t offset, std::uint64_t length) {
    return offset <= b.size() && length <= b.size() - offset;
  };
  const std::string cut = "the binary is cut short (" + std::to_string(b.size()) + " bytes)";
  if (!inside(ph_offset, std::uint64_t{ph_size} * ph_count)) return cut;
  if (!inside(sh_offset, std::uint64_t{sh_size} * sh_count) || (sh_count > 0 && sh_size < 64)) return cut;
  for (std::uint16_t i = 0; i < sh_count; ++i) {
    const std::size_t header = sh_offset + std::size_t{i} * sh_size;
    if (read_le<std::uint32_t>(b, header + 4) == kSectionNoBits) continue;
    if (!inside(read_le<std::uint64_t>(b, header + 0x18), read_le<std::uint64_t>(b, header + 0x20))) return cut;
  }
  return std::nullopt;
}

// The kernel's name from its metadata made a plain file name: a crafted name ("../x",
// "/abs/x") must not choose where the files go. Cut to 150 characters, as Triton cuts the
// names of its cache's files.
std::string file_stem(const std::string& name) {
  std::string stem;
  for (const char c : name.substr(0, 150)) {
    const bool plain =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    stem += plain || (c == '.' && !stem.empty()) ? c : '_';
  }
  return stem.empty() ? "kernel" : stem;
}

// The files write_artifact writes for `artifact` into `dir`.
std::vector<std::filesystem::path> artifact_paths(const Artifact& artifact, const std::filesystem::path& dir) {
  const std::string stem = file_stem(artifact.metadata.name);
  return {dir / (stem + "." + artifact.binary_kind), dir / (stem + ".json")};
}

// Whether the files `paths` hold the artifact's binary and metadata, byte for byte.
bool hold(const std::vector<std::filesystem::path>& paths, const Artifact& artifact) {
  std::string why;
  const auto binary = read_file(paths[0], artifact.binary.size(), why);
  const auto metadata = binary ? read_file(paths[1], artifact.metadata.json.size(), why) : std::nullopt;
  return metadata && *binary == artifact.binary && *metadata == artifact.metadata.json;
}

// A folder this process made for itself (mode 0700), removed with everything in it when the
// process exits: Triton's CompiledKernel reads its files when it is made.
class OwnFolder {
 public:
  OwnFolder() {
    std::error_code ec;
    std::string made = (std::filesystem::temp_directory_path(ec) / "tritonrt-compiled-XXXXXX").string();
    if (ec || ::mkdtemp(made.data()) == nullptr) {
      raise<ArtifactError>({}, "cannot make a folder for the files of Triton's CompiledKernel: {}",
                           ec ? ec.message() : std::strerror(errno));
    }
    path_ = made;
  }
  OwnFolder(const OwnFolder&) = delete;
  OwnFolder& operator=(const OwnFolder&) = delete;
  ~OwnFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The artifact's files in `folder`/<hash>/<digest of its bytes>/: found there, else written.
// The digest keeps two different binaries filed under one hash (an index's and a bundle's
// made elsewhere) from mixing one's metadata with the other's binary.
std::vector<std::filesystem::path> files_in(const std::filesystem::path& folder, const Artifact& artifact) {
  const std::string digest = sha256_hex(artifact.metadata.json + artifact.binary).substr(0, 16);
  const std::filesystem::path dir = folder / file_stem(artifact.metadata.hash) / digest;
  if (auto paths = artifact_paths(artifact, dir); hold(paths, artifact)) return paths;
  if (const std::string why = create_private_directories(dir); !why.empty()) raise<ArtifactError>({}, why);
  return write_artifact(artifact, dir);
}

}  // namespace

std::optional<std::string> artifact_problem(const Artifact& artifact, const Target& requested) {
  const auto& m = artifact.metadata;
  if (m.target.backend != requested.backend || m.target.arch != requested.arch ||
      m.target.warp_size != requested.warp_size) {
    return "its metadata is for " + m.target.str() + " (warp size " + std::to_string(m.target.warp_size) +
           "), not the requested " + requested.str() + " (warp size " + std::to_string(requested.warp_size) + ")";
  }
  const bool cuda = requested.backend == "cuda";
  const std::string expected_kind = cuda ? "cubin" : "hsaco";
  if (artifact.binary_kind != expected_kind) {
    return "its binary is a " + artifact.binary_kind + ", expected a " + expected_kind;
  }
  return elf_problem(artifact.binary, cuda ? kMachineCuda : kMachineAmdgpu);
}

std::string set_aside(const std::string& entry) {
  static std::atomic<unsigned> counter{0};
  const std::string target = entry + ".invalid-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  std::error_code ec;
  std::filesystem::rename(entry, target, ec);
  if (!ec) return target;
  if (!std::filesystem::exists(entry)) return "";
  // Renaming failed with the folder still there (permissions): remove it instead.
  std::filesystem::remove_all(entry, ec);
  return ec ? "(could not be moved: " + ec.message() + ")" : "(removed)";
}

std::vector<std::filesystem::path> compiled_kernel_files(const Artifact& artifact) {
  if (artifact.binary_kind != "cubin" && artifact.binary_kind != "hsaco") {
    raise<ArtifactError>({}, "a binary of kind '{}' has no files for Triton's CompiledKernel", artifact.binary_kind);
  }
  if (!artifact.cache_dir.empty()) {
    if (auto paths = artifact_paths(artifact, artifact.cache_dir); hold(paths, artifact)) return paths;
  }
  // Beside the index (its folder checked to be the user's own) while that can be written (an
  // index shipped read-only cannot), else in the process's own folder.
  if (const KernelIndex* index = KernelIndex::get()) {
    try {
      return files_in(index->dir() / "compiled", artifact);
    } catch (const ArtifactError&) {
    }
  }
  static const OwnFolder own;
  return files_in(own.path(), artifact);
}

}  // namespace tritonrt::detail

namespace tritonrt {

std::vector<std::filesystem::path> write_artifact(const Artifact& artifact, const std::filesystem::path& dir) {
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec)) {
    detail::raise<ArtifactError>({}, "cannot write into {}: it is not a folder", dir.string());
  }
  const auto paths = detail::artifact_paths(artifact, dir);
  const std::vector<std::pair<std::filesystem::path, const std::string*>> files = {{paths[0], &artifact.binary},
                                                                                   {paths[1], &artifact.metadata.json}};
  // Every path checked before anything is written: one refused path writes neither file.
  for (const auto& [path, bytes] : files) {
    if (const std::string problem = detail::output_problem(path); !problem.empty()) {
      detail::raise<ArtifactError>({}, "cannot write {}: {}", path.string(), problem);
    }
  }
  std::vector<std::filesystem::path> written;
  for (const auto& [path, bytes] : files) {
    if (const std::string why = detail::write_whole_file(path, *bytes); !why.empty()) {
      detail::raise<ArtifactError>({}, why);
    }
    written.push_back(path);
  }
  return written;
}

}  // namespace tritonrt

#include "store/elf.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "common/errors.h"
#include "store/files.h"
#include "tritonrt/error.h"

namespace tritonrt::detail {
namespace {

template <class T>
T read_struct(std::string_view bytes) {
  T value;
  std::memcpy(&value, bytes.data(), sizeof value);
  return value;
}

}  // namespace

MappedElf::MappedElf(const std::filesystem::path& path) : path_(path) {
  const InputFile file(path);  // a FIFO or device is refused without being opened
  if (!file.error().empty()) fail(file.error());
  if (file.size() < sizeof(Elf64_Ehdr)) fail("it is not an ELF program or library");
  std::string error;
  mapping_ = MappedFile(file, error);
  if (!error.empty()) fail(error);
  if (std::memcmp(mapping_.data(), ELFMAG, SELFMAG) != 0) fail("it is not an ELF program or library");
  fd_ = ::fcntl(file.descriptor(), F_DUPFD_CLOEXEC, 3);  // kept to find a sparse file's holes
}

MappedElf::~MappedElf() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t MappedElf::data_at_or_after(std::string_view view, std::size_t at) const {
  const char* data = mapping_.data();
  if (fd_ < 0 || view.data() < data || view.data() + view.size() > data + mapping_.size()) return at;
  const auto start = static_cast<std::size_t>(view.data() - data);
  const off_t next = ::lseek(fd_, static_cast<off_t>(start + at), SEEK_DATA);
  if (next < 0) return errno == ENXIO ? view.size() : at;  // ENXIO: a hole to the end
  return std::max(at, std::min(view.size(), static_cast<std::size_t>(next) - start));
}

void MappedElf::fail(const std::string& why) const {
  raise<ArtifactError>({}, "cannot read the bundles embedded in {}: {}", path_.string(), why);
}

std::string_view MappedElf::section(std::string_view name) const {
  const std::string_view file(mapping_.data(), mapping_.size());
  const std::size_t size = file.size();
  const auto header = read_struct<Elf64_Ehdr>(file);
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB) {
    fail("it is not a 64-bit little-endian ELF file");
  }
  if (header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shnum == 0 || header.e_shstrndx >= header.e_shnum) {
    fail("it has no section table tritonrt reads");
  }
  // Within the file, checked without overflow: `offset + bytes <= size`.
  const auto within = [&](std::uint64_t offset, std::uint64_t bytes) { return offset <= size && bytes <= size - offset; };
  if (!within(header.e_shoff, std::uint64_t{header.e_shnum} * sizeof(Elf64_Shdr))) {
    fail("its section table lies past its end");
  }
  const auto section_header = [&](std::size_t i) {
    return read_struct<Elf64_Shdr>(file.substr(header.e_shoff + i * sizeof(Elf64_Shdr)));
  };
  const auto contents = [&](const Elf64_Shdr& s) {
    if (s.sh_type == SHT_NOBITS) return std::string_view();
    if (!within(s.sh_offset, s.sh_size)) fail("a section lies past its end");
    return file.substr(s.sh_offset, s.sh_size);
  };
  const std::string_view names = contents(section_header(header.e_shstrndx));
  for (std::size_t i = 0; i < header.e_shnum; ++i) {
    const Elf64_Shdr s = section_header(i);
    if (s.sh_name >= names.size()) fail("a section's name lies outside the section names");
    const std::string_view rest = names.substr(s.sh_name);
    if (rest.substr(0, rest.find('\0')) == name) return contents(s);
  }
  return {};
}

std::vector<std::pair<std::size_t, std::string_view>> embedded_records(std::string_view section,
                                                                       const std::string& where,
                                                                       const MappedElf* elf) {
  std::vector<std::pair<std::size_t, std::string_view>> out;
  constexpr std::size_t kFrame = 32;  // magic, size, zeros
  std::size_t at = 0;
  while (at + kFrame <= section.size()) {
    if (section.substr(at, kEmbeddedMagic.size()) != kEmbeddedMagic) {
      // Between frames only the linker's padding: zeros, skipped in one pass to where the next
      // 16-byte block that is not all zeros starts, which must be a frame.
      const auto next = section.find_first_not_of('\0', elf != nullptr ? elf->data_at_or_after(section, at) : at);
      if (next == std::string_view::npos) break;
      if (next / 16 * 16 == at) {
        raise<ArtifactError>({}, "the bundles embedded in {} are damaged: no bundle starts at byte {} of {}", where, at,
                             kEmbeddedSection);
      }
      at = next / 16 * 16;
      continue;
    }
    std::uint64_t size = 0;
    std::memcpy(&size, section.data() + at + 16, sizeof size);
    if (size > section.size() - at - kFrame) {
      raise<ArtifactError>({}, "the bundles embedded in {} are damaged: the bundle at byte {} of {} runs past its end",
                           where, at, kEmbeddedSection);
    }
    out.emplace_back(at, section.substr(at + kFrame, static_cast<std::size_t>(size)));
    at += kFrame + (static_cast<std::size_t>(size) + 15) / 16 * 16;
  }
  return out;
}

}  // namespace tritonrt::detail

#include "store/elf.h"

#include <elf.h>

#include <cstring>

#include "common/errors.h"
#include "store/files.h"
#include "tritonrt/error.h"

namespace tritonrt::detail {
namespace {

constexpr std::size_t kMaxSection = std::size_t{4} << 30;  // bundles of a few GB at most

template <class T>
T read_struct(const std::string& bytes) {
  T value;
  std::memcpy(&value, bytes.data(), sizeof value);
  return value;
}

}  // namespace

std::string elf_section(const std::filesystem::path& path, std::string_view name) {
  const InputFile file(path);
  const auto fail = [&](const std::string& why) {
    raise<ArtifactError>({}, "cannot read the bundles embedded in {}: {}", path.string(), why);
  };
  if (!file.error().empty()) fail(file.error());
  const auto head = file.read(0, sizeof(Elf64_Ehdr));
  if (!head || std::memcmp(head->data(), ELFMAG, SELFMAG) != 0) fail("it is not an ELF program or library");
  const auto header = read_struct<Elf64_Ehdr>(*head);
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB) {
    fail("it is not a 64-bit little-endian ELF file");
  }
  if (header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shnum == 0 || header.e_shstrndx >= header.e_shnum) {
    fail("it has no section table tritonrt reads");
  }
  const auto section = [&](std::size_t i) {
    const auto bytes = file.read(header.e_shoff + i * sizeof(Elf64_Shdr), sizeof(Elf64_Shdr));
    if (!bytes) fail("its section table lies past its end");
    return read_struct<Elf64_Shdr>(*bytes);
  };
  const auto contents = [&](const Elf64_Shdr& s) {
    if (s.sh_type == SHT_NOBITS) return std::string();
    if (s.sh_size > kMaxSection) fail("a section is larger than tritonrt reads");
    const auto bytes = file.read(s.sh_offset, static_cast<std::size_t>(s.sh_size));
    if (!bytes) fail("a section lies past its end");
    return *bytes;
  };
  const std::string names = contents(section(header.e_shstrndx));
  for (std::size_t i = 0; i < header.e_shnum; ++i) {
    const Elf64_Shdr s = section(i);
    if (s.sh_name >= names.size()) fail("a section's name lies outside the section names");
    if (std::string_view(names.c_str() + s.sh_name) == name) return contents(s);
  }
  return {};
}

std::vector<std::pair<std::size_t, std::string_view>> embedded_records(std::string_view section,
                                                                       const std::string& where) {
  std::vector<std::pair<std::size_t, std::string_view>> out;
  constexpr std::size_t kFrame = 32;  // magic, size, zeros
  std::size_t at = 0;
  while (at + kFrame <= section.size()) {
    if (section.substr(at, kEmbeddedMagic.size()) != kEmbeddedMagic) {
      // Between frames only the linker's padding, zeros to the next 16 bytes.
      if (section.substr(at, 16).find_first_not_of('\0') != std::string_view::npos) {
        raise<ArtifactError>({}, "the bundles embedded in {} are damaged: no bundle starts at byte {} of {}", where, at,
                             kEmbeddedSection);
      }
      at += 16;
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

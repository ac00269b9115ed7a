// Bundles embedded in a program or shared library (tritonrt_add_kernels): the ELF section
// that holds them, and the frames each one lies in there.
//
// A frame: kEmbeddedMagic (16 bytes), the bundle's size (8 bytes, little-endian), 8 bytes of
// zeros, the bundle itself, zeros to a multiple of 16 bytes. The linker joins the frames of
// every object into one section, 16-byte aligned, maybe with zeros in between.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/files.h"

namespace tritonrt::detail {

inline constexpr std::string_view kEmbeddedSection = ".tritonrt_bundles";
inline constexpr std::string_view kEmbeddedMagic = "TRITONRT-EMBED01";
static_assert(kEmbeddedMagic.size() == 16);

/// An ELF file (64-bit, little-endian) mapped read-only for the object's life: its sections
/// are views of the mapping, so a large one is neither read whole nor copied (only the pages
/// looked at are read). Throws ArtifactError for a file that is not such an ELF file, or
/// whose section table or sections lie outside it.
class MappedElf {
 public:
  explicit MappedElf(const std::filesystem::path& path);
  ~MappedElf();
  MappedElf(const MappedElf&) = delete;
  MappedElf& operator=(const MappedElf&) = delete;

  /// Section `name`'s contents; empty when there is none.
  std::string_view section(std::string_view name) const;

  /// Where in `view` (a view of the mapping) the file holds data again at or after `at`,
  /// past a hole of a sparse file (which reads as zeros); `at` where it cannot tell.
  std::size_t data_at_or_after(std::string_view view, std::size_t at) const;

 private:
  [[noreturn]] void fail(const std::string& why) const;
  std::filesystem::path path_;
  MappedFile mapping_;
  int fd_ = -1;
};

/// The bundles framed in an embedded-bundles section, as (offset in it, bytes); `where`
/// names it in errors; `elf`, when the section is a view of it, lets the padding's holes be
/// skipped unread. Throws ArtifactError for a frame that does not read.
std::vector<std::pair<std::size_t, std::string_view>> embedded_records(std::string_view section,
                                                                       const std::string& where,
                                                                       const MappedElf* elf = nullptr);

}  // namespace tritonrt::detail

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

namespace tritonrt::detail {

inline constexpr std::string_view kEmbeddedSection = ".tritonrt_bundles";
inline constexpr std::string_view kEmbeddedMagic = "TRITONRT-EMBED01";
static_assert(kEmbeddedMagic.size() == 16);

/// The contents of section `name` of the ELF file `path` (64-bit, little-endian); "" when it
/// has none. Throws ArtifactError for a file that is not such an ELF file, or is damaged.
std::string elf_section(const std::filesystem::path& path, std::string_view name);

/// The bundles framed in an embedded-bundles section, as (offset in it, bytes); `where`
/// names it in errors. Throws ArtifactError for a frame that does not read.
std::vector<std::pair<std::size_t, std::string_view>> embedded_records(std::string_view section,
                                                                       const std::string& where);

}  // namespace tritonrt::detail

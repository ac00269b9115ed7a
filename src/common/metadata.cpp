// Triton's metadata file, read into typed fields, each checked against the range a kernel
// can have on any target: a damaged or hand-edited cache entry is an ArtifactError here,
// never a kernel launched with a wrong block size or shared memory size.

#include <bit>

#include "common/json.h"
#include "tritonrt/artifact.h"

namespace tritonrt {
namespace {

// More dynamic shared memory than any GPU gives one block (Hopper and Blackwell allow
// 227 KiB, CDNA3 64 KiB, CDNA4 160 KiB).
constexpr std::int64_t kMaxSharedBytes = 256 * 1024;

}  // namespace

KernelMetadata KernelMetadata::parse(std::string_view text) {
  const detail::JsonReader<ArtifactError> read({}, "Triton's metadata");
  const nlohmann::json j = read.parse(text);
  auto in_range = [&](const char* name, std::int64_t value, std::int64_t low, std::int64_t high, bool power_of_two) {
    if (value < low || value > high || (power_of_two && !std::has_single_bit(static_cast<std::uint64_t>(value)))) {
      read.fail("field '" + std::string(name) + "' is " + std::to_string(value) + "; expected " +
                (power_of_two ? "a power of two " : "a value ") + "from " + std::to_string(low) + " to " +
                std::to_string(high));
    }
    return value;
  };
  KernelMetadata m;
  m.name = read.field<std::string>(j, "name");
  if (m.name.empty() || m.name.find('\0') != std::string::npos) read.fail("field 'name' is not a kernel symbol");
  m.hash = read.field<std::string>(j, "hash");
  const auto target = read.field<nlohmann::json>(j, "target");
  m.target.backend = read.field<std::string>(target, "backend");
  const auto arch = read.field<nlohmann::json>(target, "arch");
  m.target.arch = arch.is_string() ? read.as<std::string>(arch, "target.arch")
                                   : std::to_string(read.as<std::int64_t>(arch, "target.arch"));
  m.target.warp_size =
      static_cast<int>(in_range("target.warp_size", read.field<std::int64_t>(target, "warp_size"), 32, 64, true));
  m.triton_version = read.field<std::string>(j, "triton_version");
  // Generous bounds: a kernel Triton compiled may not fit a device (load_function says so),
  // but values past these are damage, not options.
  m.num_warps = static_cast<int>(in_range("num_warps", read.field<std::int64_t>(j, "num_warps"), 1, 1024, true));
  m.num_ctas = static_cast<int>(in_range("num_ctas", read.field_or<std::int64_t>(j, "num_ctas", 1), 1, 16, true));
  m.num_stages = static_cast<int>(in_range("num_stages", read.field<std::int64_t>(j, "num_stages"), 0, 1 << 16, false));
  m.shared = static_cast<int>(in_range("shared", read.field<std::int64_t>(j, "shared"), 0, kMaxSharedBytes, false));
  m.tmem_size =
      static_cast<int>(in_range("tmem_size", read.field_or<std::int64_t>(j, "tmem_size", 0), 0, 1 << 20, false));
  constexpr std::int64_t kMaxScratch = std::int64_t{1} << 40;
  m.global_scratch_size =
      in_range("global_scratch_size", read.field_or<std::int64_t>(j, "global_scratch_size", 0), 0, kMaxScratch, false);
  m.global_scratch_align =
      in_range("global_scratch_align", read.field_or<std::int64_t>(j, "global_scratch_align", 1), 1, 1 << 20, true);
  m.profile_scratch_size = in_range("profile_scratch_size", read.field_or<std::int64_t>(j, "profile_scratch_size", 0),
                                    0, kMaxScratch, false);
  m.profile_scratch_align =
      in_range("profile_scratch_align", read.field_or<std::int64_t>(j, "profile_scratch_align", 1), 1, 1 << 20, true);
  m.launch_pdl = read.field_or<bool>(j, "launch_pdl", false);
  m.launch_cooperative_grid = read.field_or<bool>(j, "launch_cooperative_grid", false);
  const auto descriptors = read.field_or<nlohmann::json>(j, "tensordesc_meta", nlohmann::json::array());
  if (!descriptors.is_array()) read.fail("field 'tensordesc_meta' is not a list");
  if (descriptors.size() > 64) read.fail("field 'tensordesc_meta' lists more descriptors than a kernel can take");
  for (const auto& d : descriptors) {
    TensorDescriptorMeta meta;
    meta.swizzle = static_cast<int>(in_range("tensordesc_meta.swizzle", read.field<std::int64_t>(d, "swizzle"), 0, 3, false));
    meta.elem_size =
        static_cast<int>(in_range("tensordesc_meta.elem_size", read.field<std::int64_t>(d, "elem_size"), 1, 8, true));
    meta.elem_type =
        static_cast<int>(in_range("tensordesc_meta.elem_type", read.field<std::int64_t>(d, "elem_type"), 0, 15, false));
    const auto block = read.field<nlohmann::json>(d, "block_size");
    if (!block.is_array() || block.empty() || block.size() > 5) {
      read.fail("field 'tensordesc_meta.block_size' is not a list of 1 to 5 sizes");
    }
    for (const auto& b : block) {
      meta.block_size.push_back(in_range("tensordesc_meta.block_size", read.as<std::int64_t>(b, "tensordesc_meta.block_size"), 1, 256, false));
    }
    meta.fp4_padded = read.field_or<bool>(d, "fp4_padded", false);
    m.tensordesc_meta.push_back(std::move(meta));
  }
  m.json = std::string(text);
  return m;
}

}  // namespace tritonrt

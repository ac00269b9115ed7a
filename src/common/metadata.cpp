#include <nlohmann/json.hpp>

#include "tritonrt/artifact.h"
#include "common/errors.h"

namespace tritonrt {
namespace {

template <class T>
T field(const nlohmann::json& j, const char* name) {
  const auto it = j.find(name);
  if (it == j.end()) throw ArtifactError(std::string("tritonrt: Triton metadata has no field '") + name + "'");
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw ArtifactError(std::string("tritonrt: Triton metadata field '") + name + "' has an unexpected type: " + e.what());
  }
}

template <class T>
T field_or(const nlohmann::json& j, const char* name, T fallback) {
  const auto it = j.find(name);
  return it == j.end() || it->is_null() ? fallback : field<T>(j, name);
}

}  // namespace

KernelMetadata KernelMetadata::parse(std::string_view text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw ArtifactError(std::string("tritonrt: Triton metadata is not valid JSON: ") + e.what());
  }
  KernelMetadata m;
  m.name = field<std::string>(j, "name");
  m.hash = field<std::string>(j, "hash");
  const auto target = field<nlohmann::json>(j, "target");
  m.target.backend = field<std::string>(target, "backend");
  const auto& arch = target.at("arch");
  m.target.arch = arch.is_string() ? arch.get<std::string>() : std::to_string(arch.get<long long>());
  m.target.warp_size = field<int>(target, "warp_size");
  m.triton_version = field<std::string>(j, "triton_version");
  m.num_warps = field<int>(j, "num_warps");
  m.num_ctas = field_or<int>(j, "num_ctas", 1);
  m.num_stages = field<int>(j, "num_stages");
  m.shared = field<int>(j, "shared");
  m.tmem_size = field_or<int>(j, "tmem_size", 0);
  m.global_scratch_size = field_or<std::int64_t>(j, "global_scratch_size", 0);
  m.global_scratch_align = field_or<std::int64_t>(j, "global_scratch_align", 1);
  m.profile_scratch_size = field_or<std::int64_t>(j, "profile_scratch_size", 0);
  m.profile_scratch_align = field_or<std::int64_t>(j, "profile_scratch_align", 1);
  m.launch_pdl = field_or<bool>(j, "launch_pdl", false);
  m.launch_cooperative_grid = field_or<bool>(j, "launch_cooperative_grid", false);
  m.json = std::string(text);
  return m;
}

}  // namespace tritonrt

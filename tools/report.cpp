#include "report.h"

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "calls.h"

namespace tritonrt::cli {
namespace {

const char* kind_name(tritonrt::Decorator::Kind kind) {
  switch (kind) {
    case tritonrt::Decorator::Kind::autotune:
      return "autotune";
    case tritonrt::Decorator::Kind::heuristics:
      return "heuristics";
    default:
      return "wrapper";
  }
}

// "1 kernel", "2 kernels".
std::string count(std::size_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

}  // namespace

void print_signature(std::ostream& out, const KernelSignature& sig, bool json) {
  if (json) {
    nlohmann::json doc = {{"kernel", sig.full_name}, {"file", sig.file}};
    doc["parameters"] = nlohmann::json::array();
    for (const auto& p : sig.params) {
      doc["parameters"].push_back({{"name", p.name},
                                   {"constexpr", p.is_constexpr},
                                   {"annotation", p.annotation_type},
                                   {"do_not_specialize", p.do_not_specialize},
                                   {"do_not_specialize_on_alignment", p.do_not_specialize_on_alignment},
                                   {"default", p.has_default ? nlohmann::json(p.default_repr) : nlohmann::json()},
                                   {"set_by_decorator", p.set_by_decorator}});
    }
    doc["decorators"] = nlohmann::json::array();
    for (const auto& d : sig.decorators) {
      doc["decorators"].push_back(
          {{"type", d.type}, {"kind", kind_name(d.kind)}, {"configs", d.configs}, {"names", d.names}});
    }
    out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
  out << "kernel      " << sig.full_name << "\nfile        " << sig.file << "\nparameters\n";
  for (std::size_t i = 0; i < sig.params.size(); ++i) {
    const auto& p = sig.params[i];
    out << "  " << i << "  " << p.name;
    if (p.is_constexpr) out << "  constexpr";
    if (!p.annotation_type.empty()) out << "  annotated " << p.annotation_type;
    if (p.do_not_specialize) out << "  do_not_specialize";
    if (p.do_not_specialize_on_alignment) out << "  do_not_specialize_on_alignment";
    if (p.has_default) out << "  = " << p.default_repr;
    if (p.set_by_decorator) out << "  set by a decorator";
    out << "\n";
  }
  for (const auto& d : sig.decorators) {
    out << "decorator   " << d.type;
    if (d.kind == tritonrt::Decorator::Kind::autotune) {
      out << "  autotune: " << count(d.configs, "config", "configs") << ", key";
      for (const auto& name : d.names) out << " " << name;
    } else if (d.kind == tritonrt::Decorator::Kind::heuristics) {
      out << "  heuristics for";
      for (const auto& name : d.names) out << " " << name;
    } else {
      out << "  wrapper";
    }
    out << "\n";
  }
}

void print_compile(std::ostream& out, const JitFunction& fn, const Artifact& artifact,
                   const std::vector<std::filesystem::path>& written, bool json) {
  const auto& m = artifact.metadata;
  const auto& sig = fn.signature();
  if (json) {
    nlohmann::json params = nlohmann::json::array();
    for (std::size_t i = 0; i < sig.params.size(); ++i) {
      const auto& p = artifact.specialization.params[i];
      params.push_back({{"name", sig.params[i].name},
                        {"type", p.type},
                        {"value", p.type == "constexpr" ? nlohmann::json(p.value) : nlohmann::json()},
                        {"divisible_by_16", p.key == tritonrt::ParamSpec::Key::divisible}});
    }
    const nlohmann::json doc = {
        {"kernel", sig.full_name},
        {"target", m.target.str()},
        {"warp_size", m.target.warp_size},
        {"triton", m.triton_version},
        {"specialization", artifact.specialization.repr()},
        {"parameters", std::move(params)},
        {"num_warps", m.num_warps},
        {"num_stages", m.num_stages},
        {"num_ctas", m.num_ctas},
        {"shared", m.shared},
        {"global_scratch", {{"size", m.global_scratch_size}, {"align", m.global_scratch_align}}},
        {"profile_scratch", {{"size", m.profile_scratch_size}, {"align", m.profile_scratch_align}}},
        {"launch_pdl", m.launch_pdl},
        {"launch_cooperative_grid", m.launch_cooperative_grid},
        {"binary_kind", artifact.binary_kind},
        {"binary_bytes", artifact.binary.size()},
        {"hash", m.hash},
        {"stored_in", artifact.cache_dir},
        {"written", [&] {
           std::vector<std::string> paths;
           for (const auto& path : written) paths.push_back(path.string());
           return paths;
         }()}};
    out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
  out << "kernel          " << sig.full_name << "\n"
      << "target          " << m.target.str() << " (warp size " << m.target.warp_size << ")\n"
      << "triton          " << m.triton_version << "\n"
      << "specialization  " << artifact.specialization.repr() << "\n";
  out << "signature      ";
  for (std::size_t i = 0; i < sig.params.size(); ++i) {
    const auto& p = artifact.specialization.params[i];
    out << " " << sig.params[i].name << ":" << (p.type == "constexpr" ? "constexpr=" + p.value : p.type);
    if (p.key == tritonrt::ParamSpec::Key::divisible) out << "[div16]";
  }
  out << "\n"
      << "num_warps       " << m.num_warps << "  num_stages " << m.num_stages << "  num_ctas " << m.num_ctas << "\n"
      << "shared memory   " << m.shared << " bytes\n"
      << "global scratch  " << m.global_scratch_size << " bytes (align " << m.global_scratch_align << ")\n"
      << "profile scratch " << m.profile_scratch_size << " bytes (align " << m.profile_scratch_align << ")\n"
      << "launch          pdl=" << (m.launch_pdl ? "yes" : "no")
      << " cooperative=" << (m.launch_cooperative_grid ? "yes" : "no") << "\n"
      << "binary          " << artifact.binary_kind << ", " << artifact.binary.size() << " bytes\n"
      << "hash            " << m.hash << "\n"
      << "stored in       " << artifact.cache_dir << "\n";
  for (const auto& path : written) out << "written         " << path.string() << "\n";
}

namespace {

nlohmann::json bundle_json(const BundleInfo& info) {
  nlohmann::json doc = {{"path", info.path.string()}, {"created_by", info.created_by}, {"bytes", info.bytes}};
  doc["kernels"] = nlohmann::json::array();
  for (const auto& k : info.kernels) {
    doc["kernels"].push_back({{"identity", k.identity},
                              {"source", k.source},
                              {"name", k.name},
                              {"targets", k.targets},
                              {"artifacts", k.artifacts},
                              {"choices", k.choices},
                              {"heuristic_values", k.heuristic_values},
                              {"hook_effects", k.hook_effects},
                              {"bytes", k.bytes},
                              {"held", nlohmann::json::array()}});
    for (const auto& a : k.held) {
      doc["kernels"].back()["held"].push_back({{"target", a.target},
                                               {"options", a.options},
                                               {"specialization", a.specialization},
                                               {"hash", a.hash}});
    }
  }
  return doc;
}

}  // namespace

void print_embedded(std::ostream& out, const std::filesystem::path& binary, const std::vector<BundleInfo>& bundles,
                    bool json) {
  if (json) {
    nlohmann::json doc = {{"binary", binary.string()}, {"bundles", nlohmann::json::array()}};
    for (const auto& b : bundles) doc["bundles"].push_back(bundle_json(b));
    out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
  out << binary.string() << " embeds " << count(bundles.size(), "bundle", "bundles") << "\n";
  for (const auto& b : bundles) print_bundle(out, b, false);
}

void print_bundle(std::ostream& out, const BundleInfo& info, bool json) {
  if (json) {
    out << bundle_json(info).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
  out << info.path.string() << ": " << count(info.kernels.size(), "kernel", "kernels") << ", "
      << count(info.bytes, "byte", "bytes") << ", created by tritonrt " << info.created_by << "\n";
  for (const auto& k : info.kernels) {
    out << "  " << k.identity << "  " << count(k.artifacts, "artifact", "artifacts") << " ("
        << count(k.bytes, "byte", "bytes") << "), " << count(k.choices, "tuning choice", "tuning choices") << ", "
        << count(k.heuristic_values, "heuristic value", "heuristic values");
    if (k.hook_effects != 0) out << ", " << count(k.hook_effects, "config hook effect", "config hook effects");
    out << ", for";
    for (const auto& t : k.targets) out << " " << t;
    out << "\n    from " << k.source << "\n";
    for (const auto& a : k.held) {
      out << "    " << a.target << "  " << a.options << "  " << a.specialization << "  hash " << a.hash << "\n";
    }
  }
}

std::string_view error_kind(const std::exception& e) {
  if (dynamic_cast<const CallsError*>(&e) != nullptr) return "CallsError";
  if (dynamic_cast<const SourceError*>(&e) != nullptr) return "SourceError";
  if (dynamic_cast<const ArgumentError*>(&e) != nullptr) return "ArgumentError";
  if (dynamic_cast<const CompileError*>(&e) != nullptr) return "CompileError";
  if (dynamic_cast<const TargetError*>(&e) != nullptr) return "TargetError";
  if (dynamic_cast<const ResourceError*>(&e) != nullptr) return "ResourceError";
  if (dynamic_cast<const ArtifactError*>(&e) != nullptr) return "ArtifactError";
  if (dynamic_cast<const PythonError*>(&e) != nullptr) return "PythonError";
  if (dynamic_cast<const DriverError*>(&e) != nullptr) return "DriverError";
  if (dynamic_cast<const Error*>(&e) != nullptr) return "Error";
  return "InternalError";
}

std::string error_json(std::string_view kind, const std::string& message, int exit_code) {
  const nlohmann::json doc = {{"error", {{"kind", kind}, {"message", message}, {"exit_code", exit_code}}}};
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace tritonrt::cli

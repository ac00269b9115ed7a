// Artifacts as Triton's cache holds them: the checks an entry must pass before tritonrt
// returns or loads it, moving a damaged entry out of Triton's way, and the files Triton's own
// CompiledKernel is made from.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tritonrt/artifact.h"

namespace tritonrt::detail {

/// Why `artifact` cannot be used for `requested`, or nullopt when it can: the binary is a
/// whole ELF image for the target's machine (cubin or hsaco), and the metadata's target
/// is the one requested. (The metadata's own fields were checked when it was parsed.)
std::optional<std::string> artifact_problem(const Artifact& artifact, const Target& requested);

/// Renames the cache entry folder `entry` beside itself (`<entry>.invalid-<pid>-<n>`), so the
/// next compile of that key writes a fresh entry; returns the new name, or "" when the
/// folder is gone already (another process set it aside first).
std::string set_aside(const std::string& entry);

/// The files Triton's CompiledKernel for `artifact` reads, as write_artifact names them (the
/// binary, then the metadata): those in the artifact's `cache_dir` where it is a Triton cache
/// entry holding them unchanged (an artifact compiled in this process); else tritonrt's own
/// copy in `compiled/<hash>/<digest>/` beside the index, or, with the index off or not
/// writable, in a folder private to the process and removed when it exits. Never in Triton's
/// cache: its manager may be the user's own (TRITON_CACHE_MANAGER), which C++ cannot call.
/// Throws ArtifactError where they cannot be written.
std::vector<std::filesystem::path> compiled_kernel_files(const Artifact& artifact);

}  // namespace tritonrt::detail

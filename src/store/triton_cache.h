// Artifacts as Triton's cache holds them: the checks an entry must pass before tritonrt
// returns or loads it, and moving a damaged entry out of Triton's way.
#pragma once

#include <optional>
#include <string>

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

}  // namespace tritonrt::detail

// What a kernel's index record names as its inputs (the bridge's record_inputs: the files and
// folders its modules' code was read from and read, where each module imported by name was
// found, the environment variables read) and whether they still hold here: a file or folder
// by its stamps, else by its content hashed; a module by where an import would find it now;
// a variable by its value.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/json.h"
#include "store/index_environment.h"
#include "tritonrt/error.h"

namespace tritonrt::detail {

/// What put_kernel takes for a kernel made from the files `paths` alone (each with its
/// SHA-256 and stamps as they are now), no module imported by name and no variable read: for
/// records made without the bridge (benchmarks, tests).
nlohmann::json inputs_of_files(const std::vector<std::string>& paths);

/// Why the inputs kernel record `record` names (its fields "files", "modules" and
/// "environment") no longer hold for a kernel of `source`; "" where they all do. A field
/// that does not read is `read`'s error.
std::string inputs_changed(const JsonReader<ArtifactError>& read, const nlohmann::json& record,
                           std::string_view source);

/// A record's "environment" field, read and written.
Environment environment_from(const JsonReader<ArtifactError>& read, const nlohmann::json& object);
nlohmann::json environment_json(const Environment& environment);

}  // namespace tritonrt::detail

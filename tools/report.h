// What the `tritonrt` commands print: a kernel's signature, what a call compiled to, what a
// bundle holds; each as text for people or, with --json, as JSON for programs.
#pragma once

#include <filesystem>
#include <exception>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "tritonrt/bundle.h"
#include "tritonrt/tritonrt.h"

namespace tritonrt::cli {

/// `tritonrt signature`: the kernel's parameters and decorators.
void print_signature(std::ostream& out, const KernelSignature& sig, bool json);

/// `tritonrt compile`: the call's specialization, parameters, launch metadata, binary, hash
/// and where it is stored; `written` are the files -o wrote.
void print_compile(std::ostream& out, const JitFunction& fn, const Artifact& artifact,
                   const std::vector<std::filesystem::path>& written, bool json);

/// `tritonrt bundle list` (and what `bundle create` made): the bundle's kernels.
void print_bundle(std::ostream& out, const BundleInfo& info, bool json);
/// `bundle list` of an ELF program or library: each bundle it embeds, as print_bundle shows one.
void print_embedded(std::ostream& out, const std::filesystem::path& binary, const std::vector<BundleInfo>& bundles,
                    bool json);

/// The kind of error `e` is, as a failed command's JSON names it: tritonrt's exception
/// classes by name, a calls file's error as CallsError, anything else as InternalError.
std::string_view error_kind(const std::exception& e);
/// A failed command's report for --json: {"error": {"kind", "message", "exit_code"}}.
std::string error_json(std::string_view kind, const std::string& message, int exit_code);

}  // namespace tritonrt::cli

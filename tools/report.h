// What the `tritonrt` commands print: a kernel's signature, what a call compiled to, what a
// bundle holds; each as text for people or, with --json, as JSON for programs.
#pragma once

#include <filesystem>
#include <ostream>
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

}  // namespace tritonrt::cli

// Bundles: compiled kernels packed into one file, for machines that run them without
// Python, Triton or the kernels' .py files.
//
//     tritonrt bundle create kernels.trb                  # everything in this machine's index
//     tritonrt::load_bundle("kernels.trb");               // or TRITONRT_BUNDLE=kernels.trb,
//                                                         // or embedded: tritonrt_add_kernels in CMake
//     auto& add = tritonrt::JitFunction::get("kernels/add.py", "add_kernel");  // from the bundle
//
// A bundled kernel is found by its module's name and its own name ("add:add_kernel" for
// kernels/add.py, and for a module `pkg.add`), so the path it is given by may differ from
// the one it was compiled from. Where its .py file is present and differs from the bundled
// one's source, the bundle is not used for it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "tritonrt/artifact.h"

namespace tritonrt {

/// One compiled specialization of a bundled kernel: what a call must resolve to for it to serve.
struct BundleArtifact {
  std::string target;          ///< "cuda:90"
  std::string options;         ///< as Triton resolves them: "num_warps=4, num_stages=3, num_ctas=1, ..."
  std::string specialization;  ///< Triton's binder output, as Specialization::repr prints it
  std::string hash;            ///< Triton's kernel hash (KernelMetadata::hash)
};

/// One kernel of a bundle.
struct BundleKernel {
  std::string identity;              ///< module:kernel, what a JitFunction::get call is matched on
  std::string source;                ///< the source it was compiled from
  std::string name;                  ///< the kernel's name
  std::vector<std::string> targets;  ///< the targets it holds artifacts for, e.g. cuda:90
  std::size_t artifacts = 0;         ///< compiled specializations (all targets)
  std::size_t choices = 0;           ///< autotuners' choices
  std::size_t heuristic_values = 0;  ///< heuristics' values, one per input they were run on
  std::size_t hook_effects = 0;      ///< autotune configs' pre_hook effects, one per input they were run on
  std::size_t bytes = 0;             ///< its binaries' size
  /// The files its artifacts were compiled from (its .py file, the modules it reads, Triton's
  /// version file), where they were when it was bundled: what a build that bundles it
  /// depends on. Filled by create_bundle and by BundleCheck::everything (empty otherwise).
  std::vector<std::string> files;
  /// Its artifacts, in the order of their keys.
  std::vector<BundleArtifact> held;
};

/// What a bundle holds.
struct BundleInfo {
  std::filesystem::path path;
  std::string created_by;  ///< the tritonrt version that wrote it
  std::vector<BundleKernel> kernels;
  std::size_t bytes = 0;  ///< the file's size
  /// Kernels of the index left out when it was created here, and why (stale, damaged); with a
  /// kernel filter, only those the filter names.
  std::vector<std::string> skipped;
};

/// Which of the index's kernels and artifacts a new bundle takes; an empty list takes all.
struct BundleFilter {
  /// Kernels as SOURCE:NAME (matched by identity, so module:kernel works too) or NAME alone.
  std::vector<std::string> kernels;
  std::vector<Target> targets;
  /// Artifacts by Triton's kernel hash (KernelMetadata::hash).
  std::vector<std::string> hashes;
  /// Artifacts by kernel (SOURCE:NAME, matched as `kernels` is) and key (Artifact::key):
  /// exactly those. With these, the bundle holds those artifacts and nothing else the index
  /// holds (no tuning choices, heuristic values or hook effects): what `bundle create --calls` packs, the
  /// same whatever else the index holds.
  std::vector<std::pair<std::string, std::string>> artifacts;
};

/// Writes a bundle of what this machine's index (TRITONRT_CACHE_DIR, see the README) holds
/// for current sources: each kernel's description, its artifacts, its autotuners' choices
/// and the values of its heuristics and the block shapes of its configs' pre_hooks (those run on
/// a device, per the inputs they read: they serve the inputs they were run on, others need
/// Python). The file is written whole or not at all. Throws
/// ArtifactError when the filter leaves nothing, when two kernels the bundle would hold share an identity, or when
/// `out` is not a regular file (a device, FIFO, socket or folder) or leads into /dev: those are never replaced.
BundleInfo create_bundle(const std::filesystem::path& out, const BundleFilter& filter = {});

/// How much of a bundle read_bundle checks.
enum class BundleCheck {
  table,       ///< the header and table: what loading a bundle checks
  everything,  ///< also every kernel's entry and every binary, against their checksums and targets
};

/// What the bundle at `path` holds; checks its header and table (and with
/// BundleCheck::everything each entry and binary). Throws ArtifactError for a file that is not
/// a whole bundle this tritonrt reads.
BundleInfo read_bundle(const std::filesystem::path& path, BundleCheck check = BundleCheck::table);

/// What the bundles embedded in the ELF program or shared library `binary` hold (those
/// tritonrt_add_kernels linked into it), in the order they lie there; none when it has none.
/// Throws ArtifactError for a file that is not a 64-bit ELF file or holds a damaged bundle.
std::vector<BundleInfo> read_embedded_bundles(const std::filesystem::path& binary,
                                              BundleCheck check = BundleCheck::table);

/// Makes the bundle's kernels available to JitFunction::get in this process, before the
/// index and Python; binaries are read, checked against their checksums and loaded onto a
/// device on first use. A kernel in several loaded bundles comes from the first loaded.
/// TRITONRT_BUNDLE (paths separated by ':') loads bundles before the first kernel is got.
/// Loading the same file twice loads it once. Throws ArtifactError as read_bundle does.
BundleInfo load_bundle(const std::filesystem::path& path);

/// Registers a bundle embedded in the program: the code tritonrt_add_kernels generates calls
/// it before main(). Its kernels are available with no call, before TRITONRT_BUNDLE's, the
/// index and Python, checked as a loaded file's are; it is read at the first JitFunction::get
/// (a damaged one is an ArtifactError then). `bytes` must live as long as the process: a
/// shared library that registers a bundle stays mapped after dlclose; `name` says where it is
/// in messages. TRITONRT_EMBEDDED_BUNDLES=off leaves the embedded bundles unused.
void register_embedded_bundle(const void* bytes, std::size_t size, const char* name) noexcept;

/// What the program's embedded bundles hold (reading them now if they were not read yet).
std::vector<BundleInfo> embedded_bundles();

}  // namespace tritonrt

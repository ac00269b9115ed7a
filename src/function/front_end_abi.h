// The contract between the core and the Python front end (src/python_extension/): what the
// front end needs beyond the public API, handed over as one table through one C entry point,
// as compiler/module_abi.h's CompilerHost is the core's contract with the compiler module.
// Users of the public API see none of it: a kernel described from a live module or object, a
// launch that says which binary it ran, and the files Triton's CompiledKernel of a binary
// reads. The front end is built from the same sources as the core; a table of another version
// means a mixed install, which the front end refuses.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "tritonrt/jit_function.h"

namespace tritonrt::detail {

struct FrontEndApi {
  static constexpr std::uint32_t kVersion = 3;
  std::uint32_t version;
  /// The kernel `name` of `source` as this process's Python holds it now, for a host that
  /// runs the kernel's module itself: described through Python, never from a bundle or the
  /// index. Where the module no longer holds the object the kernel was described from (the
  /// module reloaded, the kernel defined again as a notebook cell run again defines it, or
  /// another module of that name listed in sys.modules), it is described anew and
  /// `JitFunction::get` returns that one from then on; a JitFunction got before keeps the
  /// kernel it described. Throws SourceError.
  JitFunction& (*live_kernel)(std::string_view source, std::string_view name);
  /// The kernel `object` is (a PyObject*, the GIL held: a @triton.jit function or decorators
  /// over one), described from the object itself, for a kernel no module in sys.modules names
  /// (one made inside a function, or one of a module its loader kept out of sys.modules). One
  /// JitFunction per object for the process's life, as the bridge
  /// keeps the object; never indexed (no other process can name it), so each process compiles
  /// it or finds it in Triton's cache. Throws SourceError.
  JitFunction& (*object_kernel)(const void* object);
  /// `fn(config, args...)`, returning the artifact it launched (alive as long as `fn`), which
  /// the Python launch hands back to its caller as Triton's does.
  const Artifact& (*launch)(JitFunction& fn, const LaunchConfig& config, std::span<const Arg> args);
  /// The binary's file and the metadata's, from which Triton's CompiledKernel of `artifact` is
  /// made (also for a binary the index or a bundle served, which Triton's cache need not
  /// hold): compiler/compiler.h's files_for_triton. Throws ArtifactError.
  std::vector<std::filesystem::path> (*compiled_kernel_files)(const Artifact& artifact);
};

/// Thrown out of a front-end launch where a decorator's own Python run takes the call: a tuner
/// that keeps its own tuned choices has none for the call's key (FlagGems' LibTuner tunes it
/// with its policy and keeps the choice in its database, where the next call finds it). The
/// front end hands the call, unchanged, to the stack's own run. Never thrown to a C++ caller:
/// there tritonrt tunes such a key itself.
class OwnRunTakesCall : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Whether a front-end launch runs on this thread, so that a stack's own run can take its call.
bool front_end_launch_running() noexcept;

}  // namespace tritonrt::detail

/// The table, or null where the core's is not of `version`.
extern "C" const tritonrt::detail::FrontEndApi* tritonrt_front_end_api(std::uint32_t version);

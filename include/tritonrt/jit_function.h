// JitFunction: a @triton.jit kernel from a Python file, callable from C++.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tritonrt/arg.h"
#include "tritonrt/artifact.h"
#include "tritonrt/launch.h"
#include "tritonrt/options.h"
#include "tritonrt/signature.h"

namespace tritonrt {

namespace detail {
struct FrontEndAccess;
struct KernelDescription;
}  // namespace detail

/// One autotune config compiled for a target, by JitFunction::compile_configs.
struct ConfigArtifact {
  std::string config{};                        ///< the config, as Triton prints it ("BLOCK: 64, num_warps: 4, ...")
  std::shared_ptr<const Artifact> artifact{};  ///< null when it failed to compile
  std::string error{};                         ///< why it failed to compile
};

/// The block shapes a C++ config hook sets on a call's tensor descriptors
/// (JitFunction::set_config_hook), as a Python pre_hook sets `nargs["a_desc"].block_shape`.
class BlockShapes {
 public:
  using Changes = std::vector<std::pair<std::size_t, std::vector<std::int64_t>>>;
  explicit BlockShapes(const KernelSignature& signature) : signature_(signature) {}
  /// The same with the kernel's name index: what the library hands a C++ config hook.
  BlockShapes(const KernelSignature& signature, const detail::ParamNames* names)
      : signature_(signature), names_(names) {}
  /// This config's launch loads descriptor parameter `name` `block_shape` at a time (checked
  /// as TensorDescriptor::set_block_shape checks it); throws ArgumentError for an unknown name.
  void set(std::string_view name, std::span<const std::int64_t> block_shape);
  void set(std::string_view name, std::initializer_list<std::int64_t> block_shape) {
    set(name, std::span<const std::int64_t>(block_shape.begin(), block_shape.size()));
  }
  /// What was set, as (parameter index, block shape), in order.
  const Changes& changes() const noexcept { return changes_; }

 private:
  const KernelSignature& signature_;
  const detail::ParamNames* names_ = nullptr;
  Changes changes_;
};

/// A Triton kernel, loaded once per process and shared by every caller.
///
///     auto& add = tritonrt::JitFunction::get("kernels/add.py", "add_kernel");
///     add({.grid = {tritonrt::cdiv(n, 1024)}, .stream = stream}, x, y, out, n, 1024);   // launch
///     auto artifact = add.compile(tritonrt::Target::parse("cuda:90"), {}, x, y, out, n, 1024);
///
/// Arguments are passed positionally, constexpr parameters included; omitted trailing
/// arguments take the Python defaults. Member functions are thread-safe.
///
/// Decorated kernels run as Triton runs them: `@triton.autotune`, `@triton.heuristics`,
/// their subclasses and libraries' wrappers (anything holding the kernel in `.fn`), in any
/// order. The call passes the parameters no decorator sets; heuristics run in Python once
/// per distinct input they read and device, an autotuner benchmarks its configs once per
/// tuning key and device (on the call's stream), and later calls look both up.
class JitFunction {
 public:
  /// The kernel `name` of `source`: a path to a .py file or an importable module name
  /// (`package.module`). The module is imported once per process. Throws SourceError.
  static JitFunction& get(std::string_view source, std::string_view name);

  const KernelSignature& signature() const noexcept { return signature_; }

  /// The specialization Triton's JIT would build for these argument values.
  template <class... Args>
  Specialization specialize(const Args&... args) const {
    const PackedArgs<Args...> packed(args...);
    return specialize_packed(packed);
  }

  /// Compiles (or finds in the cache) the kernel for these argument values.
  template <class... Args>
  std::shared_ptr<const Artifact> compile(const Target& target, const CompileOptions& options, const Args&... args) {
    const PackedArgs<Args...> packed(args...);
    return compile_packed(target, options, packed);
  }

  /// Launches the kernel: specializes the call, compiles and loads it on the first call
  /// with this specialization (per device context), then enqueues it on `config.stream`.
  /// A cache hit allocates nothing, formats no string, takes no lock and calls no Python.
  template <class... Args>
  void operator()(const LaunchConfig& config, const Args&... args) {
    const PackedArgs<Args...> packed(args...);
    launch_packed(config, packed);
  }

  /// The artifact a launch with these arguments runs on the current device (compiling and
  /// loading it if needed), e.g. to inspect its metadata.
  template <class... Args>
  std::shared_ptr<const Artifact> artifact_for(const LaunchConfig& config, const Args&... args) {
    const PackedArgs<Args...> packed(args...);
    return artifact_for_packed(config, packed);
  }

  /// Each config of an autotuned kernel (after its pruning) compiled for `target`, with the
  /// decorators around and under the autotuner applied: what tuning would try. No GPU needed.
  template <class... Args>
  std::vector<ConfigArtifact> compile_configs(const Target& target, const CompileOptions& options,
                                              const Args&... args) {
    const PackedArgs<Args...> packed(args...);
    return compile_configs_packed(target, options, packed);
  }

  /// Computes heuristic `name` with a C++ function instead of its Python one, so that it
  /// needs no interpreter: `fn.set_heuristic("BLOCK", [](const BoundArgs& a) {
  /// return make_arg(next_pow2(a.integer("n"))); })`. The values set before it are in `a`;
  /// a string it returns must outlive the call. Set it before the kernel is first launched.
  void set_heuristic(std::string_view name, std::function<Arg(const BoundArgs&)> heuristic);

  /// Runs `hook` for each autotune config in place of the configs' Python pre_hooks (which
  /// then do not run), so that a kernel whose hooks set its descriptors' tiles needs no
  /// interpreter: it sees the call's values with the config's (`a.integer("BLOCK_M")`) and
  /// sets block shapes, before the config is compiled, timed or launched:
  ///
  ///     fn.set_config_hook([](const BoundArgs& a, BlockShapes& tiles) {
  ///       tiles.set("a_desc", {a.integer("BLOCK_M"), a.integer("BLOCK_K")});
  ///     });
  ///
  /// Set it before the kernel is first launched; an empty function restores the Python hooks.
  void set_config_hook(std::function<void(const BoundArgs&, BlockShapes&)> hook);

  /// Type-erased forms of the templates above.
  void launch_packed(const LaunchConfig& config, std::span<const Arg> args) { (void)launch_artifact(config, args); }
  std::shared_ptr<const Artifact> artifact_for_packed(const LaunchConfig& config, std::span<const Arg> args);
  Specialization specialize_packed(std::span<const Arg> args) const;
  std::shared_ptr<const Artifact> compile_packed(const Target& target, const CompileOptions& options,
                                                 std::span<const Arg> args);
  std::vector<ConfigArtifact> compile_configs_packed(const Target& target, const CompileOptions& options,
                                                     std::span<const Arg> args);

  JitFunction(const JitFunction&) = delete;
  JitFunction& operator=(const JitFunction&) = delete;
  ~JitFunction();

 private:
  struct Impl;
  struct ResolvedArgs;
  explicit JitFunction(detail::KernelDescription kernel);
  static JitFunction& get(std::string_view source, std::string_view name, bool live);
  friend struct detail::FrontEndAccess;  // the Python front end's contract (src/function/front_end_abi.h)
  /// The launch; returns the artifact it launched (alive as long as the JitFunction).
  const Artifact& launch_artifact(const LaunchConfig& config, std::span<const Arg> args);
  const Artifact& launch_decorated(const LaunchConfig& config, std::span<const Arg> args);
  std::unique_ptr<ResolvedArgs> resolve_for_target(const CompileOptions& options, std::span<const Arg> args);

  KernelSignature signature_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tritonrt

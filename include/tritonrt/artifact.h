// A compiled kernel: the binary and Triton's metadata for it, parsed into typed fields.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "tritonrt/options.h"

namespace tritonrt {

/// How a kernel compiled to use TMA takes one tensor-descriptor parameter (an entry of
/// Triton's `tensordesc_meta`): what the CUtensorMap encoded at launch must say.
struct TensorDescriptorMeta {
  int swizzle = 0;    ///< CUtensorMapSwizzle
  int elem_size = 0;  ///< bytes
  int elem_type = 0;  ///< Triton's device-side number of the element type
  std::vector<std::int64_t> block_size;
  bool fp4_padded = false;
};

/// The fields of Triton's metadata file that a launch needs, plus the file itself.
struct KernelMetadata {
  std::string name;  ///< the kernel's symbol
  std::string hash;  ///< Triton's cache hash: the same call from Python gives the same
  Target target;
  std::string triton_version;
  int num_warps = 0;
  int num_ctas = 1;
  int num_stages = 0;
  int shared = 0;  ///< bytes of dynamic shared memory
  int tmem_size = 0;
  std::int64_t global_scratch_size = 0;
  std::int64_t global_scratch_align = 1;
  std::int64_t profile_scratch_size = 0;
  std::int64_t profile_scratch_align = 1;
  bool launch_pdl = false;
  bool launch_cooperative_grid = false;
  /// One per tensor-descriptor parameter of a kernel that takes TMA descriptors; empty when
  /// it takes each descriptor as its base address, shape and strides (no TMA on the target).
  std::vector<TensorDescriptorMeta> tensordesc_meta;
  std::string json;  ///< Triton's metadata JSON, verbatim

  /// Parses Triton's metadata JSON; throws Error naming the missing or mistyped field.
  static KernelMetadata parse(std::string_view json);
};

/// One parameter's entry in Triton's specialization list, `(type, key)` as the JIT builds it.
struct ParamSpec {
  /// How Triton keys the parameter: None, '' (specialized, no property), 'D' (divisible by
  /// 16), or the integer 1 (an annotated integer equal to 1, which stays a runtime value).
  enum class Key : std::uint8_t { none, plain, divisible, one };

  std::string type;                 ///< "i32", "*fp16", "*kfp32" (const), "constexpr", ...; a tuple's
                                    ///< as Python prints its tuple of types: "('*fp16', ('constexpr', 'i32'))"
  Key key = Key::none;              ///< runtime parameters only
  std::string value;                ///< constexpr parameters only: the value as Python's repr()
  std::vector<ParamSpec> elements;  ///< a tuple argument: its elements' entries

  bool is_tuple() const noexcept { return type.starts_with('('); }
  /// A tensor descriptor's block shape, read from its type ("tensordesc<fp16[64, 32]>" gives
  /// {64, 32}; Gluon's names its layout after it); empty for any other type.
  std::vector<std::int64_t> descriptor_block_shape() const;
};

/// The specialization of one call: one entry per kernel parameter, in order.
struct Specialization {
  std::vector<ParamSpec> params;
  /// Triton's binder output as Python would print it, e.g. `[('*fp32', 'D'), ('constexpr', 4)]`.
  std::string repr() const;
};

/// A compiled kernel for one specialization, options and target.
struct Artifact {
  KernelMetadata metadata;
  Specialization specialization;
  std::string binary;       ///< cubin (cuda) or hsaco (hip) bytes
  std::string binary_kind;  ///< "cubin" or "hsaco"
  std::string cache_dir;    ///< Triton's cache folder holding it
  /// What tritonrt's index and bundles file it under: "<target>|<options>|<specialization>",
  /// the options as Triton resolves them ("cuda:90|num_warps=4, num_stages=3, ...|[...]").
  std::string key;
};

/// Writes the artifact as Triton's cache holds it, into `dir` (created when missing): the
/// binary as `<kernel>.cubin` (or `.hsaco`) and the metadata as `<kernel>.json`; returns
/// their paths. Each file is written whole or not at all. Throws ArtifactError when a path
/// holds something other than a regular file (a device, FIFO, socket or folder: never
/// replaced) or leads into /dev.
///
///     tritonrt::write_artifact(*kernel.compile(target, {}, x, y, n), "out/");
std::vector<std::filesystem::path> write_artifact(const Artifact& artifact, const std::filesystem::path& dir);

}  // namespace tritonrt

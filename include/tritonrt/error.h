// Typed exceptions thrown by tritonrt. Every message names the kernel and, where one is
// involved, the parameter, and says what was expected and what was given.
#pragma once

#include <stdexcept>
#include <string>

namespace tritonrt {

/// Base of every tritonrt exception: `catch (const tritonrt::Error&)` catches them all.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The kernel's file or module is missing, does not import, or lacks the named kernel.
class SourceError : public Error {
 public:
  using Error::Error;
};

/// A call's arguments do not match the kernel's signature (count, kind or range).
class ArgumentError : public Error {
 public:
  using Error::Error;
};

/// Triton failed to compile the kernel; the message carries Triton's own text.
class CompileError : public Error {
 public:
  using Error::Error;
};

/// A target names no backend or architecture the installed Triton supports, or a binary was
/// built for another target than the one it is asked to run on.
class TargetError : public Error {
 public:
  using Error::Error;
};

/// The kernel needs more of a resource (threads, shared memory, scratch alignment) than the
/// device or the scratch allocator provides.
class ResourceError : public Error {
 public:
  using Error::Error;
};

/// A compiled kernel's binary or metadata is malformed (e.g. a damaged cache entry).
class ArtifactError : public Error {
 public:
  using Error::Error;
};

/// The embedded Python or the installed Triton could not be used at all.
class PythonError : public Error {
 public:
  using Error::Error;
};

/// A CUDA driver call failed, or no driver is present. `code()` is the CUresult.
class DriverError : public Error {
 public:
  DriverError(const std::string& message, int code) : Error(message), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

}  // namespace tritonrt

// What the `tritonrt` command's subcommands share: the usage error (exit 2), a call's
// arguments read from its --signature text, and how a kernel named by module is found.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "signature.h"
#include "tritonrt/tritonrt.h"

namespace tritonrt::cli {

/// A malformed command line: exit 2, the message on stderr.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void usage_error(const std::string& message);

/// The arguments of a --signature text (`where` starts the message of a malformed one, a
/// UsageError).
std::vector<Arg> parse_call(const std::string& signature, SignatureStorage& storage, const std::string& where);

/// Whether an autotune decorator is around the kernel.
bool is_autotuned(JitFunction& fn);

/// `python -m` puts the current folder first on the module search path (unless
/// PYTHONSAFEPATH is set); so does a kernel named by module here. Through PYTHONPATH: the
/// embedded Python reads it when it starts, and the index records it with a kernel named by
/// module, so one indexed from another folder is not served for this one.
void search_current_folder_first();

/// A kernel named the way the bridge takes a module, not a file.
bool names_a_module(const std::string& source);

}  // namespace tritonrt::cli

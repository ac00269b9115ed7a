// One kernel as the front end holds it (tritonrt._frontend.Kernel), and a call as it arrives:
// shared by binding.cpp (a call bound as Triton's binder binds it), call.cpp (the launch, or
// Triton's own run) and kernel.cpp (the Python types).
#pragma once

#include <climits>
#include <cstddef>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "python_extension/frontend.h"
#include "python_extension/grid_memo.h"

namespace tritonrt::frontend {

/// Triton's launch options that tritonrt passes, in the order of TRITONRT_COMPILE_OPTIONS.
inline constexpr const char* kOptionNames[] = {
#define TRITONRT_OPTION_NAME(type, name) #name,
    TRITONRT_COMPILE_OPTIONS(TRITONRT_OPTION_NAME)
#undef TRITONRT_OPTION_NAME
};
inline constexpr int kOptionCount = static_cast<int>(sizeof(kOptionNames) / sizeof(kOptionNames[0]));

/// A C++ exception carrying "a Python exception is set" through the launch path (grid(META)).
struct PythonRaised {};

struct Param {
  PyObject* name = nullptr;            ///< interned
  PyObject* default_object = nullptr;  ///< the Python default, when there is one
  Arg default_arg{};
  const char* default_problem = nullptr;  ///< why the default is not an Arg tritonrt passes
  bool set_by_decorator = false;
};

/// Where the keywords of one tuple of names go: a parameter's index, an option, grid, warmup.
struct KeywordMap {
  PyObject* names;  ///< owned
  std::vector<int> targets;
};

struct Result {
  const Artifact* artifact;
  PyObject* object;  ///< owned: what the call returns for it
  PyObject* tuned;   ///< owned: ((autotuner, its config that made the artifact), ...), or null
  /// Each tensor-descriptor parameter with the block shape the artifact was compiled for: a
  /// config's pre_hook may have set it, and the caller's descriptor then shows it, as after
  /// Triton's own launch.
  std::vector<std::pair<std::size_t, std::vector<std::int64_t>>> blocks;
};

struct Plan {
  JitFunction* fn = nullptr;
  std::vector<Param> params;
  std::vector<std::size_t> call_params;  ///< decorated: the parameters a call passes, in order
  bool decorated = false;
  std::vector<KeywordMap> keywords;
  std::deque<Result> results;                    ///< a deque: a Result stays where it is while Python adds more
  std::vector<std::unique_ptr<GridMemo>> grids;  ///< grid(META) memos, one per grid function's code
  bool logged = false;
};

struct KernelObject {
  PyObject_HEAD Plan* plan;
  PyObject* target;        ///< what Triton's path launches: the decorated stack or the JITFunction
  PyObject* fallback_run;  ///< Triton's run for it, called as fallback_run(target, *args, grid=, warmup=, **kw)
  PyObject* jit;           ///< the JITFunction inside
  PyObject* pre_run_hooks;
  PyObject* reason;  ///< why Triton launches every call (str), or null
  PyObject* bound;   ///< the last `kernel[grid]` handed out, given out again once nothing holds it
};

struct BoundObject {
  PyObject_HEAD vectorcallfunc vectorcall;
  KernelObject* kernel;
  PyObject* grid;
};

/// One call as it arrived: positional arguments, then the keywords' values (names in kwnames).
struct Call {
  PyObject* grid = nullptr;
  bool warmup = false;
  PyObject* const* args = nullptr;
  Py_ssize_t nargs = 0;
  PyObject* kwnames = nullptr;
  PyObject* const* raw = nullptr;  ///< install(): run's own arguments, self first
  std::size_t raw_nargsf = 0;
  PyObject* original = nullptr;  ///< install(): the run install() replaced, which Triton's path calls
};

/// A call bound to the kernel's parameters: the caller's objects by parameter, their Args,
/// and the Args the launch takes.
struct Binding {
  PyObject* objects[kMaxParams];
  // Raw storage: only what the call uses is written (an Arg array would be zeroed whole).
  alignas(Arg) std::byte slot_storage[sizeof(Arg) * kMaxParams];
  alignas(Arg) std::byte given_storage[sizeof(Arg) * kMaxParams];
  Arg* slots = reinterpret_cast<Arg*>(slot_storage);
  Arg* given = reinterpret_cast<Arg*>(given_storage);
  std::span<const Arg> args;
  CompileOptions options;
  CallStorage storage;  ///< behind the call's tensor-descriptor and tuple arguments
  std::string why;      ///< when Triton's path takes the call: the reason to log ("": none, Triton raises)
};

enum class Bound { ok, to_triton, raised };

/// Binds a call as Triton's binder does; to_triton where tritonrt leaves the call to Triton
/// (a value or option it does not pass, or an argument error Triton words itself).
Bound bind_call(KernelObject* k, Call& c, Binding& b);
/// The call launched through JitFunction, or handed to Triton's run; what the call returns.
PyObject* launch(KernelObject* k, Call& c);
/// kernel[grid]: the callable that launches with `grid`.
PyObject* bind(KernelObject* k, PyObject* grid);
/// A Python str as UTF-8 ("?" where it is none).
std::string utf8(PyObject* text);

}  // namespace tritonrt::frontend

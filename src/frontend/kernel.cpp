// One kernel as Python launches it: `kernel[grid](*args, **kwargs)` bound the way Triton's
// binder binds it, then JitFunction's launch path. What tritonrt cannot launch (a value it
// does not pass, a runtime hook, an argument error Triton words itself) is handed, unchanged,
// to Triton's own run, and the reason is logged once per kernel.

#include <algorithm>
#include <climits>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "frontend/frontend.h"

namespace tritonrt::frontend {
namespace {

constexpr std::size_t kMaxParams = 256;

// Triton's launch options that tritonrt passes, in the order of TRITONRT_COMPILE_OPTIONS.
const char* const kOptionNames[] = {
#define TRITONRT_OPTION_NAME(type, name) #name,
    TRITONRT_COMPILE_OPTIONS(TRITONRT_OPTION_NAME)
#undef TRITONRT_OPTION_NAME
};
constexpr int kOptionCount = static_cast<int>(sizeof(kOptionNames) / sizeof(kOptionNames[0]));

bool assign(std::optional<int>& field, PyObject* value) {
  if (Py_TYPE(value) != &PyLong_Type) return false;
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
  if (overflow != 0 || v < INT_MIN || v > INT_MAX) return false;
  field = static_cast<int>(v);
  return true;
}

bool assign(std::optional<bool>& field, PyObject* value) {
  if (Py_TYPE(value) != &PyBool_Type) return false;
  field = value == Py_True;
  return true;
}

// Option `index` set from a Python value (None: Triton's default); false for a value tritonrt
// does not pass.
bool set_option(CompileOptions& options, int index, PyObject* value) {
  if (value == Py_None) return true;
  int i = 0;
#define TRITONRT_OPTION_SET(type, name) \
  if (i++ == index) return assign(options.name, value);
  TRITONRT_COMPILE_OPTIONS(TRITONRT_OPTION_SET)
#undef TRITONRT_OPTION_SET
  return false;
}

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
};

struct Plan {
  JitFunction* fn = nullptr;
  std::vector<Param> params;
  std::vector<std::size_t> call_params;  ///< decorated: the parameters a call passes, in order
  bool decorated = false;
  std::vector<KeywordMap> keywords;
  std::vector<Result> results;
  bool logged = false;
};

}  // namespace

struct KernelObject {
  PyObject_HEAD Plan* plan;
  PyObject* target;        ///< what Triton's path launches: the decorated stack or the JITFunction
  PyObject* fallback_run;  ///< Triton's run for it, called as fallback_run(target, *args, grid=, warmup=, **kw)
  PyObject* jit;           ///< the JITFunction inside
  PyObject* pre_run_hooks;
  PyObject* reason;  ///< why Triton launches every call (str), or null
  PyObject* bound;   ///< the last `kernel[grid]` handed out, given out again once nothing holds it
};

namespace {

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
  PyObject* const* raw = nullptr;  ///< install(): JITFunction.run's own arguments, self first
  std::size_t raw_nargsf = 0;
};

std::string utf8(PyObject* text) {
  const char* s = text != nullptr ? PyUnicode_AsUTF8(text) : nullptr;
  if (s == nullptr) {
    PyErr_Clear();
    return "?";
  }
  return s;
}

// Triton's path for this call. `reason`, when given, is logged (once per kernel).
PyObject* fallback(KernelObject* k, const Call& c, const char* reason) {
  State& s = state();
  if (reason != nullptr && !k->plan->logged) {
    k->plan->logged = true;
    Ref logged(PyObject_CallFunction(s.log_fallback, "Os", k->target, reason));
    if (!logged) return nullptr;
  }
  if (c.raw != nullptr) return PyObject_Vectorcall(k->fallback_run, c.raw, c.raw_nargsf, c.kwnames);
  const Py_ssize_t keywords = c.kwnames != nullptr ? PyTuple_GET_SIZE(c.kwnames) : 0;
  std::vector<PyObject*> argv;
  argv.reserve(static_cast<std::size_t>(c.nargs + keywords + 3));
  argv.push_back(k->target);
  argv.insert(argv.end(), c.args, c.args + c.nargs + keywords);
  argv.push_back(c.grid);
  argv.push_back(Py_False);
  Ref names(PyTuple_New(keywords + 2));
  if (!names) return nullptr;
  for (Py_ssize_t i = 0; i < keywords; ++i) PyTuple_SET_ITEM(names.get(), i, Py_NewRef(PyTuple_GET_ITEM(c.kwnames, i)));
  PyTuple_SET_ITEM(names.get(), keywords, Py_NewRef(s.s_grid));
  PyTuple_SET_ITEM(names.get(), keywords + 1, Py_NewRef(s.s_warmup));
  return PyObject_Vectorcall(k->fallback_run, argv.data(), static_cast<std::size_t>(c.nargs) + 1, names.get());
}

bool same_name(PyObject* a, PyObject* b) {
  return a == b || (PyUnicode_Check(a) && PyUnicode_Check(b) && PyUnicode_Compare(a, b) == 0);
}

int keyword_target(const Plan& p, PyObject* name) {
  for (std::size_t i = 0; i < p.params.size(); ++i) {
    if (same_name(p.params[i].name, name)) return static_cast<int>(i);
  }
  State& s = state();
  if (same_name(name, s.s_grid)) return kGridKeyword;
  if (same_name(name, s.s_warmup)) return kWarmupKeyword;
  const char* text = PyUnicode_AsUTF8(name);
  if (text == nullptr) {
    PyErr_Clear();
    return kUnknownKeyword;
  }
  for (int o = 0; o < kOptionCount; ++o) {
    if (std::strcmp(text, kOptionNames[o]) == 0) return kFirstOption - o;
  }
  return kUnknownKeyword;
}

// The targets of a tuple of keyword names, worked out once per tuple (the same names, by
// identity: a call site's names are one interned tuple, and dicts keep the same strings).
const std::vector<int>& keyword_targets(Plan& p, PyObject* kwnames, std::vector<int>& scratch) {
  const Py_ssize_t count = PyTuple_GET_SIZE(kwnames);
  for (const KeywordMap& m : p.keywords) {
    if (m.names == kwnames) return m.targets;
    if (PyTuple_GET_SIZE(m.names) != count) continue;
    bool same = true;
    for (Py_ssize_t i = 0; same && i < count; ++i) same = PyTuple_GET_ITEM(m.names, i) == PyTuple_GET_ITEM(kwnames, i);
    if (same) return m.targets;
  }
  scratch.clear();
  for (Py_ssize_t i = 0; i < count; ++i) scratch.push_back(keyword_target(p, PyTuple_GET_ITEM(kwnames, i)));
  if (p.keywords.size() >= 32) return scratch;  // a caller that builds new names each call
  p.keywords.push_back({Py_NewRef(kwnames), scratch});
  return p.keywords.back().targets;
}

bool dimension(PyObject* value, std::int64_t& out) {
  if (Py_TYPE(value) == &PyLong_Type) {
    out = PyLong_AsLongLong(value);
    return !PyErr_Occurred();
  }
  Ref index(PyNumber_Index(value));
  if (!index) return false;
  out = PyLong_AsLongLong(index.get());
  return !PyErr_Occurred();
}

// A grid as Triton reads one: grid[0], then grid[1] and grid[2] where it has them; false with
// the exception Python raised reading it.
bool grid_of(PyObject* grid, Grid& out) {
  if (Py_TYPE(grid) == &PyTuple_Type && PyTuple_GET_SIZE(grid) > 0) {
    const Py_ssize_t size = PyTuple_GET_SIZE(grid);
    return dimension(PyTuple_GET_ITEM(grid, 0), out.x) && (size < 2 || dimension(PyTuple_GET_ITEM(grid, 1), out.y)) &&
           (size < 3 || dimension(PyTuple_GET_ITEM(grid, 2), out.z));
  }
  const Py_ssize_t size = PySequence_Size(grid);
  if (size < 0) return false;
  std::int64_t* dims[] = {&out.x, &out.y, &out.z};
  for (Py_ssize_t i = 0; i < (size < 1 ? 1 : size) && i < 3; ++i) {
    Ref item(PySequence_GetItem(grid, i));
    if (!item || !dimension(item.get(), *dims[i])) return false;
  }
  return true;
}

// grid(META): META holds every parameter, as Triton's bound arguments do: the caller's
// objects, defaults, and what the decorators chose.
struct GridCall {
  KernelObject* kernel;
  PyObject* grid;
  PyObject* const* objects;

  Grid operator()(const BoundArgs& bound) const {
    const Plan& p = *kernel->plan;
    const auto values = bound.values();
    Ref meta(PyDict_New());
    if (!meta) throw PythonRaised{};
    for (std::size_t i = 0; i < p.params.size(); ++i) {
      const Param& q = p.params[i];
      Ref value(objects[i] != nullptr                                ? Py_NewRef(objects[i])
                : q.default_object != nullptr && !q.set_by_decorator ? Py_NewRef(q.default_object)
                                                                     : from_arg(values[i], q.default_object));
      if (!value || PyDict_SetItem(meta.get(), q.name, value.get()) < 0) throw PythonRaised{};
    }
    Ref result(PyObject_CallOneArg(grid, meta.get()));
    Grid out;
    if (!result || !grid_of(result.get(), out)) throw PythonRaised{};
    return out;
  }
};

PyObject* result_for(KernelObject* k, const Artifact& artifact) {
  Plan& p = *k->plan;
  for (const Result& r : p.results) {
    if (r.artifact == &artifact) return Py_NewRef(r.object);
  }
  Ref specialization(PyList_New(0));
  if (!specialization) return nullptr;
  for (const ParamSpec& spec : artifact.specialization.params) {
    Ref entry(Py_BuildValue("(ss)", spec.type.c_str(), spec.value.c_str()));
    if (!entry || PyList_Append(specialization.get(), entry.get()) < 0) return nullptr;
  }
  const auto& m = artifact.metadata;
  Ref object(PyObject_CallFunction(
      state().make_result, "Os#s#y#ss#O", reinterpret_cast<PyObject*>(k), m.json.data(),
      static_cast<Py_ssize_t>(m.json.size()), m.hash.data(), static_cast<Py_ssize_t>(m.hash.size()),
      artifact.binary.data(), static_cast<Py_ssize_t>(artifact.binary.size()), artifact.binary_kind.c_str(),
      artifact.cache_dir.data(), static_cast<Py_ssize_t>(artifact.cache_dir.size()), specialization.get()));
  if (!object) return nullptr;
  p.results.push_back({&artifact, Py_NewRef(object.get())});
  return object.release();
}

// Why Triton's runtime settings keep tritonrt out of this call, as a Python str, or None.
PyObject* runtime_blocks(KernelObject* k) {
  State& s = state();
  if (PyDict_GET_SIZE(s.runtime_dict) != 0 || PyList_GET_SIZE(s.enter_hooks) != 0 ||
      PyList_GET_SIZE(s.exit_hooks) != 0) {
    return PyObject_CallNoArgs(s.runtime_check);
  }
  PyObject* mode = nullptr;
  if (PyContextVar_Get(s.async_mode, nullptr, &mode) < 0) return nullptr;
  const bool async = mode != nullptr && mode != Py_None;
  Py_XDECREF(mode);
  if (async) return PyUnicode_FromString("Triton's asynchronous compile mode is on");
  if (PyList_GET_SIZE(k->pre_run_hooks) != 0) return PyUnicode_FromString("the kernel has pre-run hooks");
  Py_RETURN_NONE;
}

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
  std::string why;  ///< when Triton's path takes the call: the reason to log ("": none, Triton raises)
};

enum class Bound { ok, to_triton, raised };

// Binds a call as Triton's binder does; to_triton where tritonrt leaves the call to Triton
// (a value or option it does not pass, or an argument error Triton words itself).
Bound bind_call(KernelObject* k, Call& c, Binding& b) {
  const Plan& p = *k->plan;
  const std::size_t n = p.params.size();
  if (static_cast<std::size_t>(c.nargs) > n) return Bound::to_triton;  // Triton's binder says so
  PyObject** objects = b.objects;
  std::fill_n(objects, n, nullptr);
  std::copy_n(c.args, c.nargs, objects);
  if (c.kwnames != nullptr) {
    std::vector<int> scratch;
    const std::vector<int>& targets = keyword_targets(*k->plan, c.kwnames, scratch);
    for (std::size_t j = 0; j < targets.size(); ++j) {
      PyObject* value = c.args[c.nargs + static_cast<Py_ssize_t>(j)];
      const int t = targets[j];
      if (t >= 0) {
        if (objects[t] != nullptr) return Bound::to_triton;  // given twice: Triton's TypeError
        objects[t] = value;
      } else if (t <= kFirstOption) {
        if (!set_option(b.options, kFirstOption - t, value)) {
          b.why =
              std::string("launch option ") + kOptionNames[kFirstOption - t] + " has a value tritonrt does not pass";
          return Bound::to_triton;
        }
      } else if (c.raw != nullptr && t == kGridKeyword) {
        c.grid = value;
      } else if (c.raw != nullptr && t == kWarmupKeyword) {
        const int truth = PyObject_IsTrue(value);
        if (truth < 0) return Bound::raised;
        c.warmup = truth != 0;
      } else {
        b.why = "keyword argument '" + utf8(PyTuple_GET_ITEM(c.kwnames, j)) +
                "' is neither a parameter nor a launch option tritonrt passes";
        return Bound::to_triton;
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const Param& q = p.params[i];
    if (objects[i] != nullptr) {
      // A value a decorator sets: Triton's decorator overrides it or refuses the call.
      if (q.set_by_decorator) return Bound::to_triton;
      if (const char* problem = to_arg(objects[i], b.slots[i])) {
        b.why = "parameter '" + utf8(q.name) + "' is " + problem;
        return Bound::to_triton;
      }
    } else if (q.set_by_decorator) {
      b.slots[i] = Arg{};
      b.slots[i].kind = ArgKind::unset;
    } else if (q.default_object != nullptr) {
      if (q.default_problem != nullptr) {
        b.why = "the default of parameter '" + utf8(q.name) + "' is " + q.default_problem;
        return Bound::to_triton;
      }
      b.slots[i] = q.default_arg;
    } else {
      return Bound::to_triton;  // a missing argument: Triton's TypeError
    }
  }
  b.args = std::span<const Arg>(b.slots, n);
  if (p.decorated) {
    // A decorated kernel takes the parameters no decorator sets, up to the last one given.
    std::size_t count = 0;
    for (std::size_t i = 0; i < p.call_params.size(); ++i) {
      b.given[i] = b.slots[p.call_params[i]];
      if (objects[p.call_params[i]] != nullptr) count = i + 1;
    }
    b.args = std::span<const Arg>(b.given, count);
  }
  return Bound::ok;
}

PyObject* launch(KernelObject* k, Call& c) {
  Plan& p = *k->plan;
  if (p.fn == nullptr) {
    const std::string why = utf8(k->reason);
    return fallback(k, c, why.c_str());
  }
  {
    Ref blocked(runtime_blocks(k));
    if (!blocked) return nullptr;
    if (blocked.get() != Py_None) {
      const std::string why = utf8(blocked.get());
      return fallback(k, c, why.c_str());
    }
  }
  Binding binding;
  switch (bind_call(k, c, binding)) {
    case Bound::raised:
      return nullptr;
    case Bound::to_triton:
      return fallback(k, c, binding.why.empty() ? nullptr : binding.why.c_str());
    case Bound::ok:
      break;
  }
  if (c.warmup || c.grid == nullptr) return fallback(k, c, nullptr);  // Triton compiles (or raises) itself
  PyObject* const* objects = binding.objects;
  const std::span<const Arg> args = binding.args;
  int device = 0;
  LaunchConfig config;
  if (!device_and_stream(device, config.stream)) return nullptr;
  config.options = binding.options;
  const GridCall grid_call{k, c.grid, objects};
  const bool callable_grid = Py_TYPE(c.grid) != &PyTuple_Type && PyCallable_Check(c.grid);
  if (callable_grid) {
    config.grid_fn = [call = &grid_call](const BoundArgs& bound) { return (*call)(bound); };
  } else if (!grid_of(c.grid, config.grid)) {
    PyErr_Clear();
    return fallback(k, c, nullptr);  // Triton raises reading it
  }
  const Artifact* artifact = nullptr;
  std::string error;
  bool raised = false;
  {
    // Nothing below reads Python but grid(META), which needs the GIL kept.
    PyThreadState* released = callable_grid ? nullptr : PyEval_SaveThread();
    try {
      artifact = &p.fn->launch_packed(config, args);
    } catch (const PythonRaised&) {
      raised = true;
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (released != nullptr) PyEval_RestoreThread(released);
  }
  if (raised) return nullptr;
  if (artifact == nullptr) {
    PyErr_Clear();
    return fallback(k, c, error.c_str());
  }
  return result_for(k, *artifact);
}

PyObject* bind(KernelObject* k, PyObject* grid) {
  auto* cached = reinterpret_cast<BoundObject*>(k->bound);
  if (cached != nullptr && Py_REFCNT(cached) == 1) {
    Py_SETREF(cached->grid, Py_NewRef(grid));
    return Py_NewRef(k->bound);
  }
  BoundObject* b = PyObject_GC_New(BoundObject, &BoundType);
  if (b == nullptr) return nullptr;
  b->vectorcall = [](PyObject* self, PyObject* const* args, std::size_t nargsf, PyObject* kwnames) {
    auto* bound = reinterpret_cast<BoundObject*>(self);
    Call c;
    c.grid = bound->grid;
    c.args = args;
    c.nargs = PyVectorcall_NARGS(nargsf);
    c.kwnames = kwnames;
    Ref keep(Py_NewRef(self));  // the grid and kernel stay alive while the call runs
    return launch(bound->kernel, c);
  };
  b->kernel = reinterpret_cast<KernelObject*>(Py_NewRef(reinterpret_cast<PyObject*>(k)));
  b->grid = Py_NewRef(grid);
  PyObject_GC_Track(b);
  Py_XSETREF(k->bound, Py_NewRef(reinterpret_cast<PyObject*>(b)));
  return reinterpret_cast<PyObject*>(b);
}

// The Kernel install() keeps for a JITFunction (made by tritonrt/launcher.py on first use).
KernelObject* kernel_of(PyObject* jit) {
  State& s = state();
  PyObject* found = PyObject_GetAttr(jit, s.s_kernel_attr);
  if (found == nullptr || Py_TYPE(found) != &KernelType) {
    Py_XDECREF(found);
    PyErr_Clear();
    found = PyObject_CallOneArg(s.kernel_for, jit);
    if (found != nullptr && Py_TYPE(found) != &KernelType) {
      Py_DECREF(found);
      PyErr_SetString(PyExc_TypeError, "tritonrt: kernel_for did not give a Kernel");
      return nullptr;
    }
  }
  return reinterpret_cast<KernelObject*>(found);
}

// --- types ------------------------------------------------------------------------------------

int kernel_traverse(PyObject* self, visitproc visit, void* arg) {
  auto* k = reinterpret_cast<KernelObject*>(self);
  Py_VISIT(k->target);
  Py_VISIT(k->fallback_run);
  Py_VISIT(k->jit);
  Py_VISIT(k->pre_run_hooks);
  Py_VISIT(k->reason);
  Py_VISIT(k->bound);
  if (k->plan != nullptr) {
    for (const Param& q : k->plan->params) Py_VISIT(q.default_object);
    for (const Result& r : k->plan->results) Py_VISIT(r.object);
  }
  return 0;
}

int kernel_clear(PyObject* self) {
  auto* k = reinterpret_cast<KernelObject*>(self);
  Py_CLEAR(k->target);
  Py_CLEAR(k->fallback_run);
  Py_CLEAR(k->jit);
  Py_CLEAR(k->pre_run_hooks);
  Py_CLEAR(k->reason);
  Py_CLEAR(k->bound);
  if (k->plan != nullptr) {
    for (Result& r : k->plan->results) Py_CLEAR(r.object);
    k->plan->results.clear();
  }
  return 0;
}

void kernel_dealloc(PyObject* self) {
  auto* k = reinterpret_cast<KernelObject*>(self);
  PyObject_GC_UnTrack(self);
  kernel_clear(self);
  if (k->plan != nullptr) {
    for (Param& q : k->plan->params) {
      Py_XDECREF(q.name);
      Py_XDECREF(q.default_object);
    }
    for (KeywordMap& m : k->plan->keywords) Py_XDECREF(m.names);
    delete k->plan;
  }
  Py_TYPE(self)->tp_free(self);
}

// Kernel(target, jit, fallback_run, source, name, defaults, reason): `source` and `name` name
// the kernel for JitFunction::get (None: Triton launches every call, for `reason`); `defaults`
// holds each parameter's default, or `jit` itself where it has none.
PyObject* kernel_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject *target, *jit, *fallback_run, *source, *name, *defaults, *reason;
  static const char* keywords[] = {"target", "jit", "fallback_run", "source", "name", "defaults", "reason", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOOO!O", const_cast<char**>(keywords), &target, &jit, &fallback_run,
                                   &source, &name, &PyTuple_Type, &defaults, &reason)) {
    return nullptr;
  }
  Ref hooks(PyObject_GetAttrString(jit, "pre_run_hooks"));
  if (!hooks || !PyList_Check(hooks.get())) {
    PyErr_SetString(PyExc_TypeError, "tritonrt: the kernel's pre_run_hooks is not a list");
    return nullptr;
  }
  auto* k = reinterpret_cast<KernelObject*>(type->tp_alloc(type, 0));
  if (k == nullptr) return nullptr;
  k->plan = new Plan();
  k->target = Py_NewRef(target);
  k->jit = Py_NewRef(jit);
  k->fallback_run = Py_NewRef(fallback_run);
  k->pre_run_hooks = hooks.release();
  k->reason = reason != Py_None ? Py_NewRef(reason) : nullptr;
  Ref self(reinterpret_cast<PyObject*>(k));
  if (source == Py_None) return self.release();
  const std::string source_text = utf8(source), name_text = utf8(name);
  try {
    k->plan->fn = &JitFunction::get(source_text, name_text);
  } catch (const std::exception& e) {
    Py_XSETREF(k->reason, PyUnicode_FromString(e.what()));
    return self.release();
  }
  const KernelSignature& sig = k->plan->fn->signature();
  if (static_cast<Py_ssize_t>(sig.params.size()) != PyTuple_GET_SIZE(defaults) || sig.params.size() > kMaxParams) {
    k->plan->fn = nullptr;
    Py_XSETREF(k->reason, PyUnicode_FromString("tritonrt's description of the kernel has other parameters than it"));
    return self.release();
  }
  k->plan->decorated = !sig.decorators.empty();
  for (std::size_t i = 0; i < sig.params.size(); ++i) {
    Param q;
    q.name = PyUnicode_InternFromString(sig.params[i].name.c_str());
    if (q.name == nullptr) return nullptr;
    q.set_by_decorator = sig.params[i].set_by_decorator;
    PyObject* value = PyTuple_GET_ITEM(defaults, static_cast<Py_ssize_t>(i));
    if (value != jit) {
      q.default_object = Py_NewRef(value);
      q.default_problem = to_arg(value, q.default_arg);
    }
    if (!q.set_by_decorator) k->plan->call_params.push_back(i);
    k->plan->params.push_back(q);
  }
  return self.release();
}

PyObject* kernel_bind(PyObject* self, PyObject* grid) { return bind(reinterpret_cast<KernelObject*>(self), grid); }

// kernel.specialization(*args, **kwargs): (Triton's specialization list as it prints, {option:
// value}) for a call bound as a launch binds it; LookupError when Triton's path would take it.
PyObject* kernel_specialization(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  auto* k = reinterpret_cast<KernelObject*>(self);
  if (k->plan->fn == nullptr) {
    PyErr_SetString(PyExc_LookupError, "Triton's path launches this kernel");
    return nullptr;
  }
  Call c;
  c.args = args;
  c.nargs = nargs;
  c.kwnames = kwnames;
  Binding binding;
  const Bound bound = bind_call(k, c, binding);
  if (bound == Bound::raised) return nullptr;
  if (bound == Bound::to_triton) {
    PyErr_SetString(PyExc_LookupError, binding.why.empty() ? "Triton's binder decides" : binding.why.c_str());
    return nullptr;
  }
  std::string repr;
  try {
    repr = k->plan->fn->specialize_packed(binding.args).repr();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_LookupError, e.what());
    return nullptr;
  }
  Ref options(PyDict_New());
  if (!options) return nullptr;
  int i = 0;
#define TRITONRT_OPTION_ITEM(type, name)                                                                 \
  if (binding.options.name) {                                                                            \
    Ref value(std::is_same_v<type, bool> ? PyBool_FromLong(*binding.options.name)                        \
                                         : PyLong_FromLong(static_cast<long>(*binding.options.name)));   \
    if (!value || PyDict_SetItemString(options.get(), kOptionNames[i], value.get()) < 0) return nullptr; \
  }                                                                                                      \
  ++i;
  TRITONRT_COMPILE_OPTIONS(TRITONRT_OPTION_ITEM)
#undef TRITONRT_OPTION_ITEM
  return Py_BuildValue("(s#O)", repr.data(), static_cast<Py_ssize_t>(repr.size()), options.get());
}

PyObject* kernel_reason(PyObject* self, void*) {
  auto* k = reinterpret_cast<KernelObject*>(self);
  if (k->reason == nullptr) Py_RETURN_NONE;
  return Py_NewRef(k->reason);
}

PyObject* kernel_target(PyObject* self, void*) { return Py_NewRef(reinterpret_cast<KernelObject*>(self)->target); }
PyObject* kernel_jit(PyObject* self, void*) { return Py_NewRef(reinterpret_cast<KernelObject*>(self)->jit); }

PyMethodDef kernel_methods[] = {
    {"bind", kernel_bind, METH_O, "kernel.bind(grid): the callable kernel[grid] is"},
    {"specialization", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(kernel_specialization)),
     METH_FASTCALL | METH_KEYWORDS, "kernel.specialization(*args, **kwargs): (Triton's specialization, options)"},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef kernel_getset[] = {
    {"reason", kernel_reason, nullptr, "why Triton's path launches every call, or None", nullptr},
    {"target", kernel_target, nullptr, "what Triton's path launches", nullptr},
    {"jit", kernel_jit, nullptr, "the JITFunction inside", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

int bound_traverse(PyObject* self, visitproc visit, void* arg) {
  auto* b = reinterpret_cast<BoundObject*>(self);
  Py_VISIT(reinterpret_cast<PyObject*>(b->kernel));
  Py_VISIT(b->grid);
  return 0;
}

int bound_clear(PyObject* self) {
  auto* b = reinterpret_cast<BoundObject*>(self);
  Py_CLEAR(b->kernel);
  Py_CLEAR(b->grid);
  return 0;
}

void bound_dealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  bound_clear(self);
  PyObject_GC_Del(self);
}

// JITFunction.run(self, *args, grid, warmup, **kwargs), while install() is in effect.
PyObject* routed_run(PyObject*, PyObject* const* args, std::size_t nargsf, PyObject* kwnames) {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (nargs < 1) {
    PyErr_SetString(PyExc_TypeError, "JITFunction.run() needs the kernel");
    return nullptr;
  }
  Ref kernel(reinterpret_cast<PyObject*>(kernel_of(args[0])));
  if (!kernel) return nullptr;
  Call c;
  c.args = args + 1;
  c.nargs = nargs - 1;
  c.kwnames = kwnames;
  c.raw = args;
  c.raw_nargsf = nargsf;
  return launch(reinterpret_cast<KernelObject*>(kernel.get()), c);
}

// JITFunction.__getitem__(self, grid), while install() is in effect: the launch without
// Triton's lambda, unless a subclass launches through its own run.
PyObject* routed_getitem(PyObject*, PyObject* const* args, std::size_t nargsf, PyObject* kwnames) {
  State& s = state();
  if (PyVectorcall_NARGS(nargsf) != 2 || kwnames != nullptr) {
    PyErr_SetString(PyExc_TypeError, "kernel[grid] takes one grid");
    return nullptr;
  }
  if (_PyType_Lookup(Py_TYPE(args[0]), s.s_run) != s.routed_run) {
    return PyObject_Vectorcall(s.original_getitem, args, 2, nullptr);
  }
  Ref kernel(reinterpret_cast<PyObject*>(kernel_of(args[0])));
  if (!kernel) return nullptr;
  return bind(reinterpret_cast<KernelObject*>(kernel.get()), args[1]);
}

// A replacement method: called unbound as f(self, ...) (Py_TPFLAGS_METHOD_DESCRIPTOR), bound
// as a method where Python asks for it.
struct RoutedObject {
  PyObject_HEAD vectorcallfunc vectorcall;
};

PyObject* routed_descr_get(PyObject* self, PyObject* obj, PyObject*) {
  if (obj == nullptr || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

}  // namespace

PyObject* make_routed(PyTypeObject* type) {
  auto* r = PyObject_New(RoutedObject, type);
  if (r == nullptr) return nullptr;
  r->vectorcall = type == &RoutedRunType ? routed_run : routed_getitem;
  return reinterpret_cast<PyObject*>(r);
}

PyTypeObject KernelType = [] {
  PyTypeObject t = blank_type();
  t.tp_name = "tritonrt._frontend.Kernel";
  t.tp_doc = "One Triton kernel launched through tritonrt (tritonrt.launcher holds one).";
  t.tp_basicsize = sizeof(KernelObject);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC;
  t.tp_new = kernel_new;
  t.tp_dealloc = kernel_dealloc;
  t.tp_traverse = kernel_traverse;
  t.tp_clear = kernel_clear;
  t.tp_methods = kernel_methods;
  t.tp_getset = kernel_getset;
  return t;
}();

PyTypeObject BoundType = [] {
  PyTypeObject t = blank_type();
  t.tp_name = "tritonrt._frontend.Bound";
  t.tp_doc = "kernel[grid]: call it with the kernel's arguments, as Triton's.";
  t.tp_basicsize = sizeof(BoundObject);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL;
  t.tp_vectorcall_offset = offsetof(BoundObject, vectorcall);
  t.tp_call = PyVectorcall_Call;
  t.tp_dealloc = bound_dealloc;
  t.tp_traverse = bound_traverse;
  t.tp_clear = bound_clear;
  return t;
}();

static PyTypeObject routed_type(const char* name, const char* doc) {
  PyTypeObject t = blank_type();
  t.tp_name = name;
  t.tp_doc = doc;
  t.tp_basicsize = sizeof(RoutedObject);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR;
  t.tp_vectorcall_offset = offsetof(RoutedObject, vectorcall);
  t.tp_call = PyVectorcall_Call;
  t.tp_descr_get = routed_descr_get;
  return t;
}

PyTypeObject RoutedRunType = routed_type("tritonrt._frontend.RoutedRun", "JITFunction.run through tritonrt");
PyTypeObject RoutedGetitemType =
    routed_type("tritonrt._frontend.RoutedGetitem", "JITFunction.__getitem__ through tritonrt");

}  // namespace tritonrt::frontend

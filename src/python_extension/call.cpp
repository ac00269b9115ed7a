// One launch from Python: the call bound, the grid read (or grid(META) called with the bound
// arguments), then JitFunction's launch path without the GIL. What tritonrt cannot launch (a
// value it does not pass, a runtime hook, an argument error Triton words itself) is handed,
// unchanged, to Triton's own run, and the reason is logged once per kernel. A call whose key a
// library's tuner tunes with its own run (FlagGems' LibTuner) is handed to the stack's own run
// too, with no warning (the core says so at INFO).

#include "python_extension/kernel.h"

#include <algorithm>

namespace tritonrt::frontend {
namespace {

// Triton's path for this call. `reason`, when given, is logged (once per kernel).
PyObject* fallback(KernelObject* k, const Call& c, const char* reason) {
  State& s = state();
  if (reason != nullptr && !k->plan->logged) {
    k->plan->logged = true;
    Ref logged(PyObject_CallFunction(s.log_fallback, "Os", k->target, reason));
    if (!logged) return nullptr;
  }
  if (c.raw != nullptr) {
    return PyObject_Vectorcall(c.original != nullptr ? c.original : k->fallback_run, c.raw, c.raw_nargsf, c.kwnames);
  }
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
// objects, defaults, and what the decorators chose. Answered from the grid's memo where it has
// one and has seen what the function reads (grid_memo.h).
struct GridCall {
  KernelObject* kernel;
  PyObject* grid;
  PyObject* const* objects;
  GridMemo* memo;

  // META's item of parameter i; a new reference.
  PyObject* item(std::size_t i, std::span<const Arg> values) const {
    const Param& q = kernel->plan->params[i];
    return objects[i] != nullptr                                ? Py_NewRef(objects[i])
           : q.default_object != nullptr && !q.set_by_decorator ? Py_NewRef(q.default_object)
                                                                : from_arg(values[i], q.default_object);
  }

  Grid operator()(const BoundArgs& bound) const {
    const Plan& p = *kernel->plan;
    const auto values = bound.values();
    GridKey key;
    const bool keyed = memo != nullptr && memo_key(values, key);
    if (keyed) {
      if (const Grid* seen = memo->find(key)) return *seen;
    }
    Ref meta(PyDict_New());
    if (!meta) throw PythonRaised{};
    for (std::size_t i = 0; i < p.params.size(); ++i) {
      Ref value(item(i, values));
      if (!value || PyDict_SetItem(meta.get(), p.params[i].name, value.get()) < 0) throw PythonRaised{};
    }
    Ref result(PyObject_CallOneArg(grid, meta.get()));
    Grid out;
    if (!result || !grid_of(result.get(), out)) throw PythonRaised{};
    // Kept only where what it read is still what the key holds (another thread may have run).
    GridKey after;
    if (keyed && memo_key(values, after) && after == key) memo->store(key, out);
    return out;
  }

  bool memo_key(std::span<const Arg> values, GridKey& key) const {
    const auto params = memo->params();
    Ref held[GridKey::kWords];
    PyObject* read[GridKey::kWords];
    if (params.size() > GridKey::kWords) return false;
    for (std::size_t j = 0; j < params.size(); ++j) {
      held[j] = Ref(item(params[j], values));
      if (!held[j]) {
        PyErr_Clear();  // the call below raises it again, as Triton's path would
        return false;
      }
      read[j] = held[j].get();
    }
    return memo->key(grid, std::span<PyObject* const>(read, params.size()), key);
  }
};

[[gnu::cold]] const Result* new_result(KernelObject* k, const Artifact& artifact) {
  Plan& p = *k->plan;
  Ref specialization(PyList_New(0));
  if (!specialization) return nullptr;
  std::vector<std::pair<std::size_t, std::vector<std::int64_t>>> blocks;
  const auto& params = artifact.specialization.params;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const ParamSpec& spec = params[i];
    Ref entry(Py_BuildValue("(ss)", spec.type.c_str(), spec.value.c_str()));
    if (!entry || PyList_Append(specialization.get(), entry.get()) < 0) return nullptr;
    if (auto block = spec.descriptor_block_shape(); !block.empty() && i < p.params.size()) {
      blocks.emplace_back(i, std::move(block));
    }
  }
  const auto& m = artifact.metadata;
  Ref made(PyObject_CallFunction(
      state().make_result, "Os#s#y#ss#O", reinterpret_cast<PyObject*>(k), m.json.data(),
      static_cast<Py_ssize_t>(m.json.size()), m.hash.data(), static_cast<Py_ssize_t>(m.hash.size()),
      artifact.binary.data(), static_cast<Py_ssize_t>(artifact.binary.size()), artifact.binary_kind.c_str(),
      artifact.cache_dir.data(), static_cast<Py_ssize_t>(artifact.cache_dir.size()), specialization.get()));
  if (!made) return nullptr;
  PyObject *object, *tuned;
  if (!PyArg_ParseTuple(made.get(), "OO!", &object, &PyTuple_Type, &tuned)) return nullptr;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuned); ++i) {
    PyObject* pair = PyTuple_GET_ITEM(tuned, i);
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
      PyErr_SetString(PyExc_TypeError, "tritonrt: make_result's tuners are (tuner, config) pairs");
      return nullptr;
    }
  }
  p.results.push_back(
      {&artifact, Py_NewRef(object), PyTuple_GET_SIZE(tuned) != 0 ? Py_NewRef(tuned) : nullptr, std::move(blocks)});
  return &p.results.back();
}

// The caller's descriptors given the block shapes the launch used where a config's pre_hook
// set others (Triton's hook sets the caller's own object): a new list each, as the hook's.
// After the launch: an object that refuses the write raises with the kernel already queued,
// where Triton's hook would have raised before it.
bool show_block_shapes(const Result& r, const Binding& b) {
  for (const auto& [param, block] : r.blocks) {
    const Arg& a = b.slots[param];
    if (b.objects[param] == nullptr || a.kind != ArgKind::descriptor) continue;
    const auto given = static_cast<const TensorDescriptor*>(a.object)->block_shape();
    if (std::ranges::equal(given, block)) continue;
    Ref list(PyList_New(static_cast<Py_ssize_t>(block.size())));
    if (!list) return false;
    for (std::size_t j = 0; j < block.size(); ++j) {
      PyObject* dim = PyLong_FromLongLong(block[j]);
      if (dim == nullptr) return false;
      PyList_SET_ITEM(list.get(), static_cast<Py_ssize_t>(j), dim);
    }
    if (PyObject_SetAttr(b.objects[param], state().s_block_shape, list.get()) < 0) return false;
  }
  return true;
}

// The result of a launch that ran `artifact`, made once per artifact; each autotuner of the
// stack gets the config that made it as its best_config, as Triton's Autotuner.run sets it,
// and the caller's descriptors the block shapes it used.
PyObject* result_for(KernelObject* k, const Artifact& artifact, const Binding& binding) {
  Plan& p = *k->plan;
  const Result* found = nullptr;
  for (const Result& r : p.results) {
    if (r.artifact == &artifact) {
      found = &r;
      break;
    }
  }
  if (found == nullptr) found = new_result(k, artifact);
  if (found == nullptr || !show_block_shapes(*found, binding)) return nullptr;
  // Held here: a tuner's __setattr__ is Python, which may launch (and add to p.results).
  Ref object(Py_NewRef(found->object));
  if (found->tuned != nullptr) {
    const Ref tuned(Py_NewRef(found->tuned));
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuned.get()); ++i) {
      PyObject* tuner = PyTuple_GET_ITEM(PyTuple_GET_ITEM(tuned.get(), i), 0);
      PyObject* config = PyTuple_GET_ITEM(PyTuple_GET_ITEM(tuned.get(), i), 1);
      // Set where it is another object: a tuner's attribute written costs several times its read.
      Ref current(PyObject_GetAttr(tuner, state().s_best_config));
      if (!current) PyErr_Clear();
      if (current.get() != config && PyObject_SetAttr(tuner, state().s_best_config, config) < 0) return nullptr;
    }
  }
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

}  // namespace

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
  const bool callable_grid = Py_TYPE(c.grid) != &PyTuple_Type && PyCallable_Check(c.grid);
  GridMemo* memo = nullptr;
  if (callable_grid && !GridMemo::of(p, c.grid, memo)) return nullptr;
  const GridCall grid_call{k, c.grid, objects, memo};
  if (callable_grid) {
    config.grid_fn = [call = &grid_call](const BoundArgs& bound) { return (*call)(bound); };
  } else if (!grid_of(c.grid, config.grid)) {
    PyErr_Clear();
    return fallback(k, c, nullptr);  // Triton raises reading it
  }
  const Artifact* artifact = nullptr;
  std::string error;
  bool raised = false;
  bool own_run = false;  // a tuner's own run takes this call (the core logged why)
  {
    // Nothing below reads Python but grid(META), which needs the GIL kept.
    PyThreadState* released = callable_grid ? nullptr : PyEval_SaveThread();
    try {
      artifact = &state().core->launch(*p.fn, config, args);
    } catch (const PythonRaised&) {
      raised = true;
    } catch (const detail::OwnRunTakesCall&) {
      own_run = true;
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (released != nullptr) PyEval_RestoreThread(released);
  }
  if (raised) return nullptr;
  if (own_run) return fallback(k, c, nullptr);
  if (artifact == nullptr) {
    PyErr_Clear();
    return fallback(k, c, error.c_str());
  }
  return result_for(k, *artifact, binding);
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

}  // namespace tritonrt::frontend

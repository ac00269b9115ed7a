// The front end's Python types: Kernel (one kernel, what tritonrt.launcher holds), Bound
// (kernel[grid]) and the replacements of JITFunction.run and __getitem__ that install() sets.

#include <string>
#include <type_traits>

#include "python_extension/kernel.h"

namespace tritonrt::frontend {
namespace {

// A Kernel (or None) kept on `target` as `attribute`, else the one `make`(target) gives
// (tritonrt/_wiring.py makes it once and keeps it there).
PyObject* kept_kernel(PyObject* target, PyObject* attribute, PyObject* make) {
  PyObject* found = PyObject_GetAttr(target, attribute);
  if (found == nullptr || (Py_TYPE(found) != &KernelType && found != Py_None)) {
    Py_XDECREF(found);
    PyErr_Clear();
    found = PyObject_CallOneArg(make, target);
    if (found != nullptr && Py_TYPE(found) != &KernelType && found != Py_None) {
      Py_DECREF(found);
      PyErr_SetString(PyExc_TypeError, "tritonrt: the front end's wiring did not give a Kernel");
      return nullptr;
    }
  }
  return found;
}

// The Kernel install() keeps for a kernel object (a JITFunction or a stack of decorators over
// one); None for one tritonrt leaves alone.
PyObject* kernel_of(PyObject* target) {
  State& s = state();
  return kept_kernel(target, s.s_kernel_attr, s.kernel_for);
}

// Whether `routed`, the replacement of a base class's run (Autotuner.run, Heuristics.run), was
// called for `target` whose class has a run of its own: called from that run (super().run).
bool called_from_own_run(PyObject* target, PyObject* routed) {
  Ref own(PyObject_GetAttr(reinterpret_cast<PyObject*>(Py_TYPE(target)), state().s_run));
  PyErr_Clear();
  return own && own.get() != routed;
}

// --- types ------------------------------------------------------------------------------------

// The kernel's own references, visited and cleared alike.
constexpr PyObject* KernelObject::*kReferences[] = {&KernelObject::target, &KernelObject::fallback_run,
                                                    &KernelObject::jit,    &KernelObject::pre_run_hooks,
                                                    &KernelObject::reason, &KernelObject::bound};

int kernel_traverse(PyObject* self, visitproc visit, void* arg) {
  auto* k = reinterpret_cast<KernelObject*>(self);
  for (PyObject* KernelObject::*field : kReferences) Py_VISIT(k->*field);
  if (k->plan != nullptr) {
    for (const Param& q : k->plan->params) Py_VISIT(q.default_object);
    for (const Result& r : k->plan->results) {
      Py_VISIT(r.object);
      Py_VISIT(r.tuned);
    }
  }
  return 0;
}

int kernel_clear(PyObject* self) {
  auto* k = reinterpret_cast<KernelObject*>(self);
  for (PyObject* KernelObject::*field : kReferences) Py_CLEAR(k->*field);
  if (k->plan != nullptr) {
    for (Result& r : k->plan->results) {
      Py_CLEAR(r.object);
      Py_CLEAR(r.tuned);
    }
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
// the kernel for JitFunction::get, or `source` is the kernel object itself and `name` None for
// one no module names (None and None: Triton launches every call, for `reason`); `defaults`
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
  try {
    k->plan->fn =
        name == Py_None ? &state().core->object_kernel(source) : &state().core->live_kernel(utf8(source), utf8(name));
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

// A replacement method that install() sets on a class (JITFunction, Autotuner, Heuristics:
// run; KernelInterface: __getitem__), holding the function it replaces. Called unbound as
// f(self, ...) (Py_TPFLAGS_METHOD_DESCRIPTOR), bound as a method where Python asks for it.
struct RoutedObject {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject* original;
};

// run(self, *args, grid, warmup, **kwargs), while install() is in effect: the stack from self
// down launched through tritonrt; the replaced run where tritonrt leaves self alone.
PyObject* routed_run(PyObject* callable, PyObject* const* args, std::size_t nargsf, PyObject* kwnames) {
  auto* routed = reinterpret_cast<RoutedObject*>(callable);
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (nargs < 1) {
    PyErr_SetString(PyExc_TypeError, "run() needs the kernel");
    return nullptr;
  }
  Ref kernel(kernel_of(args[0]));
  if (!kernel) return nullptr;
  if (kernel.get() == Py_None) return PyObject_Vectorcall(routed->original, args, nargsf, kwnames);
  if (reinterpret_cast<KernelObject*>(kernel.get())->reason != nullptr && called_from_own_run(args[0], callable)) {
    // The class's own run left to Python has reached its base's: the stack from here down
    // may be tritonrt's.
    Ref base(kept_kernel(args[0], state().s_base_kernel_attr, state().base_kernel_for));
    if (!base) return nullptr;
    if (base.get() != Py_None) kernel = std::move(base);
  }
  Call c;
  c.args = args + 1;
  c.nargs = nargs - 1;
  c.kwnames = kwnames;
  c.raw = args;
  c.raw_nargsf = nargsf;
  c.original = routed->original;
  return launch(reinterpret_cast<KernelObject*>(kernel.get()), c);
}

// KernelInterface.__getitem__(self, grid), while install() is in effect: the stack's launch
// bound to the grid, without Triton's lambda; the replaced __getitem__ where tritonrt leaves
// self alone.
PyObject* routed_getitem(PyObject* callable, PyObject* const* args, std::size_t nargsf, PyObject* kwnames) {
  auto* routed = reinterpret_cast<RoutedObject*>(callable);
  if (PyVectorcall_NARGS(nargsf) != 2 || kwnames != nullptr) {
    PyErr_SetString(PyExc_TypeError, "kernel[grid] takes one grid");
    return nullptr;
  }
  Ref kernel(kernel_of(args[0]));
  if (!kernel) return nullptr;
  if (kernel.get() == Py_None) return PyObject_Vectorcall(routed->original, args, 2, nullptr);
  return bind(reinterpret_cast<KernelObject*>(kernel.get()), args[1]);
}

PyObject* routed_descr_get(PyObject* self, PyObject* obj, PyObject*) {
  if (obj == nullptr || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

void routed_dealloc(PyObject* self) {
  Py_XDECREF(reinterpret_cast<RoutedObject*>(self)->original);
  PyObject_Free(self);
}

PyObject* routed_wrapped(PyObject* self, void*) { return Py_NewRef(reinterpret_cast<RoutedObject*>(self)->original); }

PyGetSetDef routed_getset[] = {
    {"__wrapped__", routed_wrapped, nullptr, "the function install() replaced with this", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

// Whether torch.compiler.is_compiling() would say so: torch.compile or torch.export is tracing
// Python code as it runs (is_compiling() reads the flag; torch.jit.is_scripting() is false in Python).
bool torch_is_compiling() {
  State& s = state();
  if (s.compiler_namespace == nullptr) return false;
  PyObject* flag = PyDict_GetItemWithError(s.compiler_namespace, s.s_is_compiling_flag);  // borrowed
  if (flag == nullptr) PyErr_Clear();
  return flag == Py_True;
}

}  // namespace

PyObject* launcher_subscript(PyObject* self, PyObject* grid) {
  State& s = state();
  if (!torch_is_compiling()) {
    Ref kernel(PyObject_GenericGetAttr(self, s.s_launcher_kernel));  // Launcher's __getattr__ is for the kernel's
    if (kernel && Py_TYPE(kernel.get()) == &KernelType)
      return bind(reinterpret_cast<KernelObject*>(kernel.get()), grid);
    PyErr_Clear();
  }
  // While tracing, and for an object without its Kernel yet: the class's own __getitem__.
  PyObject* method = _PyType_Lookup(Py_TYPE(self), s.s_getitem);  // borrowed
  if (method == nullptr) {
    PyErr_SetString(PyExc_TypeError, "tritonrt: this object has no __getitem__");
    return nullptr;
  }
  PyObject* argv[] = {self, grid};
  return PyObject_Vectorcall(method, argv, 2, nullptr);
}

PyObject* make_routed(PyTypeObject* type, PyObject* original) {
  auto* r = PyObject_New(RoutedObject, type);
  if (r == nullptr) return nullptr;
  r->vectorcall = type == &RoutedRunType ? routed_run : routed_getitem;
  r->original = Py_NewRef(original);
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
  t.tp_dealloc = routed_dealloc;
  t.tp_getset = routed_getset;
  return t;
}

PyTypeObject RoutedRunType = routed_type("tritonrt._frontend.RoutedRun", "a kernel class's run through tritonrt");
PyTypeObject RoutedGetitemType =
    routed_type("tritonrt._frontend.RoutedGetitem", "KernelInterface.__getitem__ through tritonrt");

}  // namespace tritonrt::frontend

// A call bound to a kernel's parameters the way Triton's binder binds it: positional
// arguments, keywords (a parameter, a launch option, grid and warmup under install()), then
// defaults and what the decorators set. What tritonrt does not pass goes to Triton's path,
// with the reason.

#include <algorithm>
#include <cstring>

#include "python_extension/kernel.h"

namespace tritonrt::frontend {
namespace {

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

}  // namespace

std::string utf8(PyObject* text) {
  const char* s = text != nullptr ? PyUnicode_AsUTF8(text) : nullptr;
  if (s == nullptr) {
    PyErr_Clear();
    return "?";
  }
  return s;
}

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
      if (const char* problem = to_arg(objects[i], b.slots[i], &b.storage)) {
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

}  // namespace tritonrt::frontend

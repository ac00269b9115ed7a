// grid(META) answered from a memo (grid_memo.h): the plan read from Python once per code
// object and kernel, then, per launch, the names checked and the values read into a key.

#include "python_extension/grid_memo.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "python_extension/kernel.h"

namespace tritonrt::frontend {
namespace {

// A kernel keeps memos (or the word that a code has none) for this many grid functions' codes;
// another one is called every launch.
constexpr std::size_t kCodesPerKernel = 32;
// Grids kept per memo; the memo starts again empty past it.
constexpr std::size_t kGridsPerMemo = 256;

enum : std::int64_t { kInt = 1, kBool, kNone, kFloat, kTuple, kSize };

bool put(GridKey& key, std::int64_t word) {
  if (key.size == GridKey::kWords) return false;
  key.words[key.size++] = word;
  return true;
}

// A plain value into the key: an int that fits 64 bits, a bool, None, a float, or a tuple of
// those (a torch.Size too; no other subclass, whose methods may run code); false for anything
// else, with no exception left set.
bool encode(PyObject* value, GridKey& key, bool in_tuple = false) {
  if (PyLong_CheckExact(value)) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    return overflow == 0 && put(key, kInt) && put(key, v);
  }
  if (PyBool_Check(value)) return put(key, kBool) && put(key, value == Py_True);
  if (value == Py_None) return put(key, kNone);
  if (PyFloat_CheckExact(value)) {
    return put(key, kFloat) && put(key, std::bit_cast<std::int64_t>(PyFloat_AS_DOUBLE(value)));
  }
  const bool size_object =
      state().size_type != nullptr && Py_TYPE(value) == reinterpret_cast<PyTypeObject*>(state().size_type);
  if (!in_tuple && (PyTuple_CheckExact(value) || size_object)) {  // a torch.Size prints otherwise: its own kind
    const Py_ssize_t size = PyTuple_GET_SIZE(value);
    if (!put(key, size_object ? kSize : kTuple) || !put(key, size)) return false;
    for (Py_ssize_t i = 0; i < size; ++i) {
      if (!encode(PyTuple_GET_ITEM(value, i), key, true)) return false;
    }
    return true;
  }
  return false;
}

// What a global name of `f` names, its module's value else a builtin (borrowed); null where
// neither has it. Both are plain dicts (key() checks), so nothing runs reading them.
PyObject* global(PyFunctionObject* f, PyObject* name) {
  PyObject* found = PyDict_GetItemWithError(f->func_globals, name);
  if (found == nullptr && !PyErr_Occurred()) found = PyDict_GetItemWithError(f->func_builtins, name);
  PyErr_Clear();
  return found;
}

// at.name, a new reference or null. A plain module's attribute whose name the module type
// does not define (`triton.cdiv`) is read from its dict, which is what module_getattro finds
// there after looking the name up on the type first.
PyObject* attribute(PyObject* at, PyObject* name, bool in_module_dict) {
  if (in_module_dict && PyModule_CheckExact(at)) {
    if (PyObject* found = PyDict_GetItemWithError(PyModule_GetDict(at), name)) return Py_NewRef(found);
    if (PyErr_Occurred()) return nullptr;
  }
  return PyObject_GetAttr(at, name);
}

}  // namespace

bool GridKey::operator==(const GridKey& other) const noexcept {
  return size == other.size && std::memcmp(words, other.words, size * sizeof(words[0])) == 0;
}

std::size_t GridKeyHash::operator()(const GridKey& key) const noexcept {
  std::uint64_t h = 0x9e3779b97f4a7c15ull ^ key.size;
  for (std::uint32_t i = 0; i < key.size; ++i) {
    h ^= static_cast<std::uint64_t>(key.words[i]) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  }
  return static_cast<std::size_t>(h);
}

bool GridMemo::of(Plan& plan, PyObject* grid, GridMemo*& out) {
  out = nullptr;
  if (!PyFunction_Check(grid)) return true;
  const Ref code(Py_NewRef(PyFunction_GET_CODE(grid)));
  const auto known = [&] {
    const auto it = std::ranges::find_if(plan.grids, [&](const auto& memo) { return memo->code_ == code.get(); });
    if (it != plan.grids.end() && (*it)->usable_) out = it->get();
    return it != plan.grids.end();
  };
  if (known() || plan.grids.size() >= kCodesPerKernel) return true;
  // (keys, checks, values), or None: see python/tritonrt/_grids.py. Where reading it was
  // interrupted, the call raises, and the code is read again next time; any other error
  // leaves the function to be called every launch.
  Ref read(PyObject_CallOneArg(state().grid_plan, grid));
  if (!read) {
    if (!PyErr_ExceptionMatches(PyExc_Exception)) return false;
    PyErr_Clear();
    read = Ref(Py_NewRef(Py_None));
  }
  // Python ran: the function may have another code now, or another thread added this one.
  if (PyFunction_GET_CODE(grid) != code.get() || known() || plan.grids.size() >= kCodesPerKernel) return true;
  std::unique_ptr<GridMemo> memo(new GridMemo);
  memo->code_ = Py_NewRef(code.get());
  GridMemo* made = plan.grids.emplace_back(std::move(memo)).get();
  PyObject *keys, *checks, *values;
  if (read.get() == Py_None ||
      !PyArg_ParseTuple(read.get(), "O!O!O!", &PyTuple_Type, &keys, &PyTuple_Type, &checks, &PyTuple_Type, &values)) {
    PyErr_Clear();  // a grid the plan cannot read is called, as Triton calls it
    return true;
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(keys); ++i) {
    PyObject* key = PyTuple_GET_ITEM(keys, i);
    const auto at = std::find_if(plan.params.begin(), plan.params.end(), [&](const Param& q) {
      return PyUnicode_Check(key) && PyUnicode_Compare(q.name, key) == 0;
    });
    if (at == plan.params.end()) return true;  // not in META: the function raises, as on Triton's path
    made->params_.push_back(static_cast<std::size_t>(at - plan.params.begin()));
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(checks); ++i) {
    PyObject *name, *attributes, *expected;
    if (!PyArg_ParseTuple(PyTuple_GET_ITEM(checks, i), "UO!O!", &name, &PyTuple_Type, &attributes, &PyTuple_Type,
                          &expected) ||
        PyTuple_GET_SIZE(expected) != PyTuple_GET_SIZE(attributes) + 1) {
      PyErr_Clear();
      return true;
    }
    Check& check = made->checks_.emplace_back(Check{Py_NewRef(name), {}, {}, {}});
    for (Py_ssize_t a = 0; a < PyTuple_GET_SIZE(attributes); ++a) {
      PyObject* attribute = PyTuple_GET_ITEM(attributes, a);
      const bool code = PyUnicode_Check(attribute) && PyUnicode_CompareWithASCIIString(attribute, "__code__") == 0;
      check.attributes.push_back(code ? nullptr : Py_NewRef(attribute));
      const int module_own = code ? 1 : PyObject_HasAttr(reinterpret_cast<PyObject*>(&PyModule_Type), attribute);
      check.in_module_dict.push_back(module_own == 0);
    }
    for (Py_ssize_t a = 0; a < PyTuple_GET_SIZE(expected); ++a) {
      PyObject* step = PyTuple_GET_ITEM(expected, a);
      check.expected.push_back(step == Py_Ellipsis ? nullptr : Py_NewRef(step));
    }
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(values); ++i)
    made->values_.push_back(Py_NewRef(PyTuple_GET_ITEM(values, i)));
  made->usable_ = true;
  out = made;
  return true;
}

GridMemo::~GridMemo() {
  Py_XDECREF(code_);
  for (Check& c : checks_) {
    Py_DECREF(c.name);
    for (PyObject* a : c.attributes) Py_XDECREF(a);
    for (PyObject* e : c.expected) Py_XDECREF(e);
  }
  for (PyObject* v : values_) Py_DECREF(v);
}

bool GridMemo::key(PyObject* grid, std::span<PyObject* const> meta, GridKey& out) const {
  auto* f = reinterpret_cast<PyFunctionObject*>(grid);
  // Defaults set on the function after the plan was read: what it reads is no longer known.
  // Namespaces of a dict subclass: reading a name may run their own code.
  if (f->func_defaults != nullptr || f->func_kwdefaults != nullptr || !PyDict_CheckExact(f->func_globals) ||
      !PyDict_CheckExact(f->func_builtins)) {
    return false;
  }
  for (const Check& c : checks_) {
    Ref held(Py_XNewRef(global(f, c.name)));  // held: reading an attribute may run code that rebinds the name
    PyObject* at = held.get();
    for (std::size_t step = 0;; ++step) {
      if (at == nullptr || (c.expected[step] != nullptr && at != c.expected[step])) {
        PyErr_Clear();
        return false;
      }
      if (step == c.attributes.size()) break;
      if (c.attributes[step] == nullptr) {
        // A function's __code__, read directly: Python's getter raises an audit event, whose
        // hooks (the index's observer among them) would cost more than the rest of the launch.
        at = PyFunction_Check(at) ? PyFunction_GET_CODE(at) : nullptr;
        continue;
      }
      held = Ref(attribute(at, c.attributes[step], c.in_module_dict[step]));
      at = held.get();
    }
  }
  out.size = 0;
  if (PyObject* cells = f->func_closure) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(cells); ++i) {
      PyObject* value = PyCell_GET(PyTuple_GET_ITEM(cells, i));
      if (value == nullptr || !encode(value, out)) return false;
    }
  }
  for (PyObject* name : values_) {
    PyObject* value = global(f, name);
    if (value == nullptr || !encode(value, out)) return false;
  }
  for (PyObject* value : meta) {
    if (!encode(value, out)) return false;
  }
  return true;
}

const Grid* GridMemo::find(const GridKey& key) const {
  const auto it = grids_.find(key);
  return it == grids_.end() ? nullptr : &it->second;
}

void GridMemo::store(const GridKey& key, const Grid& grid) {
  if (grids_.size() == kGridsPerMemo) grids_.clear();
  grids_.emplace(key, grid);
}

}  // namespace tritonrt::frontend

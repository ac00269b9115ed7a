// What each argument kind is to the bridge (python_compiler/bridge/*.py), in one file per
// kind as in common/kinds/ (scalar.cpp, pointer.cpp, descriptor.cpp, tuple.cpp), found through
// one table indexed by ArgKind (below; python_kinds.cpp dispatches). Runs with the GIL held.
#pragma once

#include <pybind11/pybind11.h>

#include <array>
#include <cassert>
#include <string>
#include <vector>

#include "common/kinds/kinds.h"
#include "compiler/kernel_model.h"

namespace tritonrt::detail {

namespace py = pybind11;

/// One kind's conversions; nullptr where the kind has none (see each dispatcher below).
struct PythonKind {
  /// A constexpr's value for the bridge's compile.
  py::object (*constexpr_value)(const Arg& arg, const KernelDescription& kernel, std::size_t index);
  /// The argument as bridge/arguments.py's python_arguments reads it: (name, kind, ...).
  py::tuple (*argument)(const std::string& name, const KernelDescription& kernel, const PythonArg& arg);
  /// A tuning key's value as (kind, value), for bridge/decorators.py's _key_tuple.
  py::tuple (*key_value)(const Arg& arg);
};

// Each kind's entry, defined in its home.
extern const PythonKind kNonePython, kBooleanPython, kSintPython, kUintPython, kRealPython, kStringPython, kTypedPython,
    kDtypePython, kPythonDefaultPython, kUnsetPython;  // scalar.cpp
extern const PythonKind kPointerPython;                // pointer.cpp
extern const PythonKind kDescriptorPython;             // descriptor.cpp
extern const PythonKind kTuplePython;                  // tuple.cpp

/// The table: each ArgKind's entry at its index.
inline constexpr KindTable<PythonKind> kPythonKindTable = make_kind_table<PythonKind>({
    {ArgKind::none, &kNonePython},
    {ArgKind::boolean, &kBooleanPython},
    {ArgKind::sint, &kSintPython},
    {ArgKind::uint, &kUintPython},
    {ArgKind::real, &kRealPython},
    {ArgKind::pointer, &kPointerPython},
    {ArgKind::string, &kStringPython},
    {ArgKind::typed, &kTypedPython},
    {ArgKind::dtype, &kDtypePython},
    {ArgKind::python_default, &kPythonDefaultPython},
    {ArgKind::unset, &kUnsetPython},
    {ArgKind::descriptor, &kDescriptorPython},
    {ArgKind::tuple, &kTuplePython},
});
static_assert(kPythonKindTable.complete, "every ArgKind has one entry");
inline constexpr const auto& kPythonKinds = kPythonKindTable.entries;

inline const PythonKind& python_kind(ArgKind kind) {
  assert(static_cast<std::size_t>(kind) < kPythonKinds.size() && "an ArgKind out of range");  // as kind_ops
  return *kPythonKinds[static_cast<std::size_t>(kind)];
}

/// A constexpr's value as the bridge's compile reads it: ("value", v), ("dtype", name),
/// ("default",) or ("tuple", values); throws ArgumentError for a kind no constexpr holds.
py::object constexpr_object(const Arg& arg, const KernelDescription& kernel, std::size_t index);
/// A call's argument as python_arguments reads it: (name, kind, ...); a fixed-type scalar as
/// the number it holds, a kind without a conversion as ("none", None).
py::tuple python_arg(const KernelDescription& kernel, const PythonArg& arg);
/// A tuning key's values as (kind, value) pairs, a kind without a conversion as ("none", None).
py::list python_key(const std::vector<Arg>& key);

}  // namespace tritonrt::detail

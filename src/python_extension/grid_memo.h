// grid(META) answered from a memo: for a grid function whose result can depend only on what it
// reads (python/tritonrt/_grids.py reads its bytecode and says what that is: META's items, its
// closure's cells, its module's values, and names that must still name pure functions), the
// grid it gave is kept per distinct value of what it read, and the launch calls it again only
// for values it has not seen. A launch of a library's `lambda meta: (triton.cdiv(N,
// meta["BLOCK"]), M)` then builds no META dict and runs no Python frame.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "python_extension/frontend.h"

namespace tritonrt::frontend {

struct Plan;

/// What one call's grid function read, as words: each value's kind, then its bits.
struct GridKey {
  static constexpr std::uint32_t kWords = 24;
  std::uint32_t size = 0;
  std::int64_t words[kWords];
  bool operator==(const GridKey& other) const noexcept;
};

struct GridKeyHash {
  std::size_t operator()(const GridKey& key) const noexcept;
};

/// The memo of one grid function's code, for one kernel.
class GridMemo {
 public:
  /// The memo for `grid` in `plan` into `out`, made on its code's first sight; null where the
  /// grid is not one the memo may answer for (then it is called every launch). False with a
  /// Python exception set where reading the function raised.
  static bool of(Plan& plan, PyObject* grid, GridMemo*& out);
  ~GridMemo();
  GridMemo(const GridMemo&) = delete;
  GridMemo& operator=(const GridMemo&) = delete;

  /// The parameters whose META items the function reads, in the order key() takes them.
  std::span<const std::size_t> params() const noexcept { return params_; }
  /// The key of a call of `grid` whose META items params() are `meta` (borrowed); false where a
  /// name no longer names what the memo was made for or a value read is not a plain one.
  /// Never leaves a Python exception set.
  bool key(PyObject* grid, std::span<PyObject* const> meta, GridKey& out) const;
  const Grid* find(const GridKey& key) const;
  void store(const GridKey& key, const Grid& grid);

 private:
  struct Check {
    PyObject* name;                     ///< a global name
    std::vector<PyObject*> attributes;  ///< read in turn from what it names (null: a function's __code__)
    /// Per attribute: a name the module type does not define, so a module's dict answers it.
    std::vector<bool> in_module_dict;
    /// The object each step must reach, from the name's on (null: any).
    std::vector<PyObject*> expected;
  };
  GridMemo() = default;

  PyObject* code_ = nullptr;  ///< the code object it is for (owned)
  bool usable_ = false;       ///< false: the function is called every launch
  std::vector<std::size_t> params_;
  std::vector<Check> checks_;      // owned references
  std::vector<PyObject*> values_;  ///< global names whose values it reads (owned)
  std::unordered_map<GridKey, Grid, GridKeyHash> grids_;
};

}  // namespace tritonrt::frontend

// How C++ values become kernel arguments. Each argument type has an `ArgTraits`
// specialization that writes the value into a type-erased `Arg`; `JitFunction` does the
// rest (Triton's specialization rules, the cache key, the kernel parameters) in compiled code.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "tritonrt/dtype.h"

namespace tritonrt {

/// What an `Arg` holds. Integers keep their value and signedness; Triton types them by value.
enum class ArgKind : std::uint8_t {
  none,            ///< Python None (std::nullopt, nullptr)
  boolean,         ///< bool
  sint,            ///< any signed integer, widened to int64
  uint,            ///< any unsigned integer, widened to uint64
  real,            ///< float or double, widened to double
  pointer,         ///< a device address with its element type
  string,          ///< constexpr strings only
  typed,           ///< a scalar whose Triton type the caller fixed (see `scalar`)
  dtype,           ///< a constexpr dtype such as tl.float16
  python_default,  ///< the parameter's own Python default object (omitted trailing argument)
  unset,           ///< no value yet: a parameter a decorator sets, before it has
  descriptor,      ///< a TMA tensor descriptor (tritonrt/tensor_descriptor.h); `object` points at it
  tuple,           ///< a tuple (std::tuple, std::pair): `object` points at its `value.u` elements
};

/// What a pointer argument came from, for the Python code around a kernel (heuristics and
/// hooks see a stand-in of it: its `dtype`, and a tensor's shape and strides).
enum class ArgSource : std::uint8_t {
  address,  ///< a typed address (T*, DevicePtr): `dtype` is a triton.language type
  tensor,   ///< a tensor (tritonrt/torch.h): `dtype` is a torch dtype; `object` points at it
};

/// One type-erased argument: 24 bytes, trivially copyable, never owns memory.
struct Arg {
  union {
    std::int64_t i;
    std::uint64_t u;
    double f;
    const char* s;
  } value{};
  union {
    std::size_t size = 0;  ///< string length; a pointer's extent in bytes (0: unknown)
    const void* object;    ///< a pointer from a tensor (source == tensor): the tensor; a descriptor;
                           ///< a tuple's first element (an array of Args)
  };
  ArgKind kind = ArgKind::none;
  DType dtype = DType::u1;                ///< element type (pointer), fixed type (typed), or the dtype
  ArgKind stored = ArgKind::none;         ///< typed only: how `value` holds the number
  ArgSource source = ArgSource::address;  ///< pointers only

  /// How `value` holds the number: `stored` for a fixed-type scalar, else `kind`.
  constexpr ArgKind value_kind() const noexcept { return kind == ArgKind::typed ? stored : kind; }
  /// A tuple's elements (empty for any other kind).
  std::span<const Arg> elements() const noexcept {
    if (kind != ArgKind::tuple) return {};
    return {static_cast<const Arg*>(object), static_cast<std::size_t>(value.u)};
  }
};

static_assert(sizeof(Arg) == 24, "an Arg is three words: packing a call stays cheap");

/// What Python code around a kernel may read of a tensor argument (`x.shape`, `x.stride()`,
/// `x.device`), and the bytes it spans (for an autotuner's reset_to_zero / restore_value).
struct TensorShape {
  static constexpr int kMaxDims = 16;
  int dims = -1;  ///< -1: not known
  std::int64_t sizes[kMaxDims] = {};
  std::int64_t strides[kMaxDims] = {};  ///< in elements
  int device = -1;
  std::size_t bytes = 0;  ///< from the first to one past the last element
};

/// Reads the shape of a tensor argument (Arg::object of an ArgSource::tensor pointer). The
/// torch adapter installs one; without one, tensors show Python only their dtype and address.
using TensorInspector = void (*)(const void* tensor, TensorShape& shape);
void set_tensor_inspector(TensorInspector inspector) noexcept;
/// The installed inspector, or nullptr.
TensorInspector tensor_inspector() noexcept;

/// A device address tagged with its element type, for memory whose C++ type says nothing
/// (e.g. bf16 or fp8 buffers): `tritonrt::DevicePtr{ptr, tritonrt::DType::bf16}`. `bytes`,
/// when given, is how much memory it spans: an autotuner's reset_to_zero and restore_value
/// need it (a tensor knows it itself).
struct DevicePtr {
  const void* address = nullptr;
  DType dtype = DType::u8;
  std::size_t bytes = 0;
};

/// A scalar whose Triton type is fixed by the caller instead of by its value, as an
/// annotation would fix it: `scalar(DType::i64, n)` always passes an i64. Values that do not
/// fit the type are rejected, never truncated.
struct TypedScalar {
  Arg arg;
};
template <class T>
TypedScalar scalar(DType type, T value) {
  static_assert(std::is_arithmetic_v<T>, "tritonrt::scalar takes an arithmetic value");
  TypedScalar s;
  if constexpr (std::is_same_v<T, bool>) {
    s.arg.value.u = value ? 1 : 0;
    s.arg.stored = ArgKind::boolean;
  } else if constexpr (std::is_floating_point_v<T>) {
    s.arg.value.f = static_cast<double>(value);
    s.arg.stored = ArgKind::real;
  } else if constexpr (std::is_signed_v<T>) {
    s.arg.value.i = static_cast<std::int64_t>(value);
    s.arg.stored = ArgKind::sint;
  } else {
    s.arg.value.u = static_cast<std::uint64_t>(value);
    s.arg.stored = ArgKind::uint;
  }
  s.arg.kind = ArgKind::typed;
  s.arg.dtype = type;
  return s;
}

template <class T>
inline constexpr bool kUnsupportedArg = false;

/// Maps a C++ argument type to an `Arg`. Specialize it to teach tritonrt a new type
/// (the torch adapter adds at::Tensor this way).
template <class T, class Enable = void>
struct ArgTraits {
  static_assert(kUnsupportedArg<T>,
                "tritonrt: this C++ type cannot be a kernel argument. Use an integer, float, "
                "double, bool, a typed device pointer T*, tritonrt::DevicePtr, "
                "tritonrt::scalar(...), tritonrt::TensorDescriptor, a string or DType (constexpr parameters), "
                "std::nullopt/nullptr (None), a std::tuple or std::pair of these, or specialize "
                "tritonrt::ArgTraits for it.");
};

template <>
struct ArgTraits<bool> {
  static void pack(Arg& a, bool v) noexcept {
    a.kind = ArgKind::boolean;
    a.value.u = v ? 1 : 0;
  }
};

template <class T>
struct ArgTraits<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char>>> {
  static_assert(sizeof(T) <= 8, "tritonrt: integers wider than 64 bits fit no Triton type");
  static void pack(Arg& a, T v) noexcept {
    if constexpr (std::is_signed_v<T>) {
      a.kind = ArgKind::sint;
      a.value.i = static_cast<std::int64_t>(v);
    } else {
      a.kind = ArgKind::uint;
      a.value.u = static_cast<std::uint64_t>(v);
    }
  }
};

template <class T>
struct ArgTraits<T, std::enable_if_t<std::is_floating_point_v<T>>> {
  static_assert(sizeof(T) <= 8, "tritonrt: long double fits no Triton type");
  static void pack(Arg& a, T v) noexcept {
    a.kind = ArgKind::real;
    a.value.f = static_cast<double>(v);
  }
};

template <class T>
struct ArgTraits<T*, std::enable_if_t<!std::is_same_v<std::remove_cv_t<T>, char>>> {
  static_assert(dtype_of<T>().has_value(),
                "tritonrt: a device pointer's element type must be bool, an integer, float or "
                "double; for fp16/bf16/fp8 buffers pass tritonrt::DevicePtr{ptr, DType::...}");
  static void pack(Arg& a, T* p) noexcept {
    a.kind = ArgKind::pointer;
    a.value.u = reinterpret_cast<std::uintptr_t>(p);
    a.dtype = *dtype_of<T>();
  }
};

template <>
struct ArgTraits<DevicePtr> {
  static void pack(Arg& a, DevicePtr p) noexcept {
    a.kind = ArgKind::pointer;
    a.value.u = reinterpret_cast<std::uintptr_t>(p.address);
    a.dtype = p.dtype;
    a.size = p.bytes;
  }
};

template <>
struct ArgTraits<TypedScalar> {
  static void pack(Arg& a, const TypedScalar& s) noexcept { a = s.arg; }
};

template <>
struct ArgTraits<DType> {
  static void pack(Arg& a, DType t) noexcept {
    a.kind = ArgKind::dtype;
    a.dtype = t;
  }
};

template <>
struct ArgTraits<std::nullptr_t> {
  static void pack(Arg& a, std::nullptr_t) noexcept { a.kind = ArgKind::none; }
};

template <>
struct ArgTraits<std::nullopt_t> {
  static void pack(Arg& a, std::nullopt_t) noexcept { a.kind = ArgKind::none; }
};

template <>
struct ArgTraits<std::string_view> {
  static void pack(Arg& a, std::string_view v) noexcept {
    a.kind = ArgKind::string;
    a.value.s = v.data();
    a.size = v.size();
  }
};
template <>
struct ArgTraits<std::string> {
  static void pack(Arg& a, const std::string& v) noexcept { ArgTraits<std::string_view>::pack(a, v); }
};
template <>
struct ArgTraits<const char*> {
  static void pack(Arg& a, const char* v) noexcept { ArgTraits<std::string_view>::pack(a, std::string_view(v)); }
};
template <>
struct ArgTraits<char*> : ArgTraits<const char*> {};

template <class T>
struct ArgTraits<std::optional<T>> {
  static void pack(Arg& a, const std::optional<T>& v) {
    if (v) {
      ArgTraits<std::decay_t<T>>::pack(a, *v);
    } else {
      a.kind = ArgKind::none;
    }
  }
};

/// Packs one C++ value; an array decays to a pointer to its const elements (a string literal
/// to const char*, a host array `float a[16]` to const float*).
template <class T>
inline void pack_arg(Arg& a, const T& v) {
  ArgTraits<std::decay_t<const T>>::pack(a, v);
}

/// One packed value, built in place (so the defaults it overwrites cost nothing). A tuple
/// needs room for its elements: calls pack theirs with `PackedArgs`.
template <class T>
inline Arg make_arg(const T& v) {
  Arg a;
  pack_arg(a, v);
  return a;
}

/// A tuple argument over `elements`, which must outlive the calls it is passed to (for
/// callers that pack arguments themselves; `PackedArgs` does it for std::tuple and std::pair).
inline Arg tuple_arg(std::span<const Arg> elements) noexcept {
  Arg a;
  a.kind = ArgKind::tuple;
  a.value.u = elements.size();
  a.object = elements.data();
  return a;
}

namespace detail {

template <class T>
struct IsTuple : std::false_type {};
template <class... Ts>
struct IsTuple<std::tuple<Ts...>> : std::true_type {};
template <class A, class B>
struct IsTuple<std::pair<A, B>> : std::true_type {};

/// How many Args a value's tuple elements take, at every depth (0 for any other value).
template <class T>
struct NestedArgs : std::integral_constant<std::size_t, 0> {};
template <class... Ts>
struct NestedArgs<std::tuple<Ts...>>
    : std::integral_constant<std::size_t, (sizeof...(Ts) + ... + NestedArgs<std::remove_cvref_t<Ts>>::value)> {};
template <class A, class B>
struct NestedArgs<std::pair<A, B>>
    : std::integral_constant<std::size_t, 2 + NestedArgs<std::remove_cvref_t<A>>::value +
                                              NestedArgs<std::remove_cvref_t<B>>::value> {};

/// Packs `v`; a tuple's elements go to `*cursor` onward (its nested tuples' after them).
template <class T>
Arg make_nested_arg(const T& v, Arg*& cursor) {
  if constexpr (IsTuple<std::remove_cvref_t<T>>::value) {
    constexpr std::size_t n = std::tuple_size_v<std::remove_cvref_t<T>>;
    Arg* elements = cursor;
    cursor += n;
    std::apply(
        [&](const auto&... e) {
          std::size_t i = 0;
          ((elements[i++] = make_nested_arg(e, cursor)), ...);
        },
        v);
    return tuple_arg(std::span<const Arg>(elements, n));
  } else {
    return make_arg(v);
  }
}

}  // namespace detail

/// A call's arguments packed, with room for the elements of its tuples: what the call
/// templates of JitFunction pass to its `*_packed` functions. Neither copied nor moved (tuple
/// arguments point into it).
template <class... Args>
class PackedArgs {
  static constexpr std::size_t kNested = (detail::NestedArgs<std::decay_t<Args>>::value + ... + 0);
  std::array<Arg, kNested> nested_;  // first: the arguments below point into it
  Arg* cursor_ = nested_.data();
  std::array<Arg, sizeof...(Args)> args_;

 public:
  explicit PackedArgs(const Args&... args) : args_{detail::make_nested_arg(args, cursor_)...} {}
  PackedArgs(const PackedArgs&) = delete;
  PackedArgs& operator=(const PackedArgs&) = delete;
  std::span<const Arg> span() const noexcept { return args_; }
  operator std::span<const Arg>() const noexcept { return args_; }
};

}  // namespace tritonrt

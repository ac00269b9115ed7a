// Parity with Triton's own Python runtime on the GPU: the same kernel, called with the same
// values through `kernel[grid](...)` and through tritonrt, writes identical outputs, and both
// run the binary with the same cache hash.

#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "compiler/compiler.h"
#include "gpu_test.h"

namespace tritonrt::test {
namespace {

namespace py = pybind11;

// The Python half: torch tensors, Triton's launch, exact comparison.
constexpr const char* kPythonHelpers = R"PY(
import torch
import triton

SENTINEL = -1024.0  # exact in every dtype used, outside every kernel's results; both outputs start with it

def randn(shape, dtype):
    return torch.randn(shape, device="cuda", dtype=torch.float32).to(getattr(torch, dtype))

def sentinel(shape, dtype):
    shape = shape if isinstance(shape, tuple) else (shape, )
    return torch.full(shape, SENTINEL, device="cuda", dtype=getattr(torch, dtype))

def launch(kernel, grid, args, options):
    compiled = kernel[tuple(grid)](*args, **options)
    torch.cuda.synchronize()
    if type(compiled).__name__ != "CompiledKernel":
        raise TypeError(f"kernel[grid](...) returned {type(compiled).__name__}, not a CompiledKernel")
    return compiled.hash

def identical(a, b):
    torch.cuda.synchronize()
    return bool(torch.equal(a, b))

def head(a, n):
    """The first n elements along the last axis."""
    return a[..., :n]

def changed(a):
    """Every element differs from the sentinel (for outputs the kernel writes completely)."""
    return bool((a != SENTINEL).all())

def close(a, b):
    """Equal to a torch reference within float32 rounding."""
    torch.cuda.synchronize()
    return bool(torch.allclose(a, b, rtol=1e-5, atol=1e-5))
)PY";

class Parity : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    // tritonrt's compiler starts (or finds) the interpreter and its bridge module; getting a
    // kernel may not, when tritonrt's index serves it (parity then covers indexed artifacts).
    (void)detail::python_side({}, "the parity tests compare with Triton");
    py::gil_scoped_acquire gil;
    try {
      auto torch = py::module_::import("torch");
      if (!torch.attr("cuda").attr("is_available")().cast<bool>()) {
        GTEST_SKIP() << "torch in the embedded Python sees no CUDA device";
      }
      torch.attr("manual_seed")(rng().seed());
    } catch (py::error_already_set& e) {
      GTEST_SKIP() << "the parity tests need torch in the embedded Python: " << e.what();
    }
  }

  // Helpers defined once per test, in a fresh namespace; call only with the GIL held.
  py::dict helpers() {
    py::dict scope;
    py::exec(kPythonHelpers, scope);
    return scope;
  }

  // The JITFunction object tritonrt imported (the same module object both sides use).
  static py::object kernel(const char* name, const std::string& source = kGpuKernels) {
    return py::module_::import("_tritonrt_bridge").attr("import_source")(source).attr(name);
  }

  template <class T>
  static T* ptr(const py::object& tensor) {
    return reinterpret_cast<T*>(tensor.attr("data_ptr")().cast<std::uintptr_t>());
  }
  static DevicePtr ptr(const py::object& tensor, DType dtype) {
    return DevicePtr{reinterpret_cast<const void*>(tensor.attr("data_ptr")().cast<std::uintptr_t>()), dtype};
  }
};

// tritonrt launches on the legacy default stream (nullptr), which is torch's default stream.
constexpr void* kDefaultStream = nullptr;

TEST_F(Parity, AddFp32) {
  py::gil_scoped_acquire gil;
  auto h = helpers();
  const int n = 100003;
  auto x = h["randn"](n, "float32"), y = h["randn"](n, "float32");
  auto out_py = h["sentinel"](n, "float32"), out_rt = h["sentinel"](n, "float32");
  const Grid grid{cdiv(n, 1024)};
  const auto hash = h["launch"](kernel("add_kernel"), py::make_tuple(grid.x),
                                py::make_tuple(x, y, out_py, n, 1024, false), py::dict())
                        .cast<std::string>();
  auto& fn = JitFunction::get(kGpuKernels, "add_kernel");
  const LaunchConfig config{.grid = grid, .stream = kDefaultStream};
  fn(config, ptr<float>(x), ptr<float>(y), ptr<float>(out_rt), n, 1024, false);
  EXPECT_TRUE(h["identical"](out_py, out_rt).cast<bool>());
  EXPECT_TRUE(h["identical"](out_rt, x + y).cast<bool>());
  EXPECT_EQ(fn.artifact_for(config, ptr<float>(x), ptr<float>(y), ptr<float>(out_rt), n, 1024, false)->metadata.hash,
            hash);
}

TEST_F(Parity, AddFp16) {
  py::gil_scoped_acquire gil;
  auto h = helpers();
  const int n = 4099;
  auto x = h["randn"](n, "float16"), y = h["randn"](n, "float16");
  auto out_py = h["sentinel"](n, "float16"), out_rt = h["sentinel"](n, "float16");
  const Grid grid{cdiv(n, 512)};
  const auto hash =
      h["launch"](kernel("add_kernel"), py::make_tuple(grid.x), py::make_tuple(x, y, out_py, n, 512, false), py::dict())
          .cast<std::string>();
  auto& fn = JitFunction::get(kGpuKernels, "add_kernel");
  const LaunchConfig config{.grid = grid, .stream = kDefaultStream};
  fn(config, ptr(x, DType::fp16), ptr(y, DType::fp16), ptr(out_rt, DType::fp16), n, 512, false);
  EXPECT_TRUE(h["identical"](out_py, out_rt).cast<bool>());
  EXPECT_TRUE(h["changed"](out_rt).cast<bool>());
  EXPECT_EQ(fn.artifact_for(config, ptr(x, DType::fp16), ptr(y, DType::fp16), ptr(out_rt, DType::fp16), n, 512, false)
                ->metadata.hash,
            hash);
}

TEST_F(Parity, RowSoftmax) {
  py::gil_scoped_acquire gil;
  auto h = helpers();
  const int rows = 53, cols = 781, in_stride = 800, out_stride = 784;
  auto x = h["randn"](py::make_tuple(rows, in_stride), "float32");
  auto out_py = h["sentinel"](py::make_tuple(rows, out_stride), "float32");
  auto out_rt = h["sentinel"](py::make_tuple(rows, out_stride), "float32");
  const auto hash = h["launch"](kernel("softmax_kernel"), py::make_tuple(rows),
                                py::make_tuple(out_py, x, in_stride, out_stride, cols, 1024), py::dict())
                        .cast<std::string>();
  auto& fn = JitFunction::get(kGpuKernels, "softmax_kernel");
  const LaunchConfig config{.grid = {rows}, .stream = kDefaultStream};
  fn(config, ptr<float>(out_rt), ptr<float>(x), in_stride, out_stride, cols, 1024);
  EXPECT_TRUE(h["identical"](out_py, out_rt).cast<bool>());
  // The columns the kernel writes were written (the rest stay equal to the sentinel in both).
  EXPECT_TRUE(h["changed"](h["head"](out_rt, cols)).cast<bool>());
  EXPECT_EQ(
      fn.artifact_for(config, ptr<float>(out_rt), ptr<float>(x), in_stride, out_stride, cols, 1024)->metadata.hash,
      hash);
}

TEST_F(Parity, I64AndConstexprOneArguments) {
  py::gil_scoped_acquire gil;
  auto h = helpers();
  const std::int64_t base = (std::int64_t{1} << 33) + 12345;
  const int n = 1000;
  auto out_py = h["sentinel"](3 * n, "int64"), out_rt = h["sentinel"](3 * n, "int64");
  auto& fn = JitFunction::get(kGpuKernels, "iota_kernel");
  for (const int stride : {1, 3}) {
    SCOPED_TRACE("stride " + std::to_string(stride));
    const Grid grid{cdiv(n, 256)};
    const auto hash = h["launch"](kernel("iota_kernel"), py::make_tuple(grid.x),
                                  py::make_tuple(out_py, base, n, stride, 256), py::dict())
                          .cast<std::string>();
    const LaunchConfig config{.grid = grid, .stream = kDefaultStream};
    fn(config, ptr<std::int64_t>(out_rt), base, n, stride, 256);
    EXPECT_TRUE(h["identical"](out_py, out_rt).cast<bool>());
    EXPECT_EQ(fn.artifact_for(config, ptr<std::int64_t>(out_rt), base, n, stride, 256)->metadata.hash, hash);
  }
  // Stride 1 wrote all of [0, n); the elements stride 3 skipped stay equal to the sentinel in both.
  EXPECT_TRUE(h["changed"](h["head"](out_rt, n)).cast<bool>());
}

TEST_F(Parity, NoneArgument) {
  py::gil_scoped_acquire gil;
  auto h = helpers();
  const int n = 5003;
  auto x = h["randn"](n, "float32");
  auto out_py = h["sentinel"](n, "float32"), out_rt = h["sentinel"](n, "float32");
  const Grid grid{cdiv(n, 512)};
  const auto hash = h["launch"](kernel("bias_add_kernel"), py::make_tuple(grid.x),
                                py::make_tuple(x, py::none(), out_py, n, 512), py::dict())
                        .cast<std::string>();
  auto& fn = JitFunction::get(kGpuKernels, "bias_add_kernel");
  const LaunchConfig config{.grid = grid, .stream = kDefaultStream};
  fn(config, ptr<float>(x), std::nullopt, ptr<float>(out_rt), n, 512);
  EXPECT_TRUE(h["identical"](out_py, out_rt).cast<bool>());
  EXPECT_TRUE(h["identical"](out_rt, x).cast<bool>());
  EXPECT_EQ(fn.artifact_for(config, ptr<float>(x), std::nullopt, ptr<float>(out_rt), n, 512)->metadata.hash, hash);
}

// Tuples (tests/kernels/tuple_kernels.py): a tuple of pointers of two dtypes, nested
// coefficients whose 1 and None elements become constexprs (then a bias and a scale other
// than 1: another specialization), a constexpr tuple shape, a heuristic reading a tuple.
TEST_F(Parity, TupleArguments) {
  py::gil_scoped_acquire gil;
  auto h = helpers();
  const std::string source = std::string(TRITONRT_TEST_KERNELS) + "/tuple_kernels.py";
  const int n = 100003;
  auto x = h["randn"](n, "float32"), y = h["randn"](n, "float16");
  const Grid grid{cdiv(n, 1024)};
  auto& combine = JitFunction::get(source, "tuple_combine");
  const LaunchConfig config{.grid = grid, .stream = kDefaultStream};
  const auto srcs = std::make_tuple(ptr<float>(x), ptr(y, DType::fp16));
  const auto run = [&](const auto& coeffs, const py::tuple& py_coeffs, const py::object& expected, const char* what) {
    SCOPED_TRACE(what);
    auto out_py = h["sentinel"](n, "float32"), out_rt = h["sentinel"](n, "float32");
    const auto hash = h["launch"](kernel("tuple_combine", source), py::make_tuple(grid.x),
                                  py::make_tuple(py::make_tuple(x, y), out_py, py_coeffs, n, 1024), py::dict())
                          .cast<std::string>();
    combine(config, srcs, ptr<float>(out_rt), coeffs, n, 1024);
    EXPECT_TRUE(h["identical"](out_py, out_rt).cast<bool>());
    EXPECT_TRUE(h["close"](out_rt, expected).cast<bool>());
    EXPECT_EQ(combine.artifact_for(config, srcs, ptr<float>(out_rt), coeffs, n, 1024)->metadata.hash, hash);
  };
  const py::object yf = y.attr("float")();
  run(std::make_tuple(std::make_pair(2.0, 1), std::make_tuple(3, std::nullopt)),
      py::make_tuple(py::make_tuple(2.0, 1), py::make_tuple(3, py::none())), x * py::float_(2.0) + yf + py::int_(3),
      "scale 1 and no bias: constexprs");
  run(std::make_tuple(std::make_pair(0.5, -1.5), std::make_tuple(2, 0.25)),
      py::make_tuple(py::make_tuple(0.5, -1.5), py::make_tuple(2, 0.25)),
      x * py::float_(0.5) + yf * py::float_(-1.5) + py::float_(2.25), "runtime scale and bias");

  // A constexpr tuple as the tile's shape.
  auto& shape = JitFunction::get(source, "tuple_shape");
  auto tile = h["randn"](py::make_tuple(32, 64), "float32");
  auto tile_py = h["sentinel"](py::make_tuple(32, 64), "float32"),
       tile_rt = h["sentinel"](py::make_tuple(32, 64), "float32");
  const auto tile_hash = h["launch"](kernel("tuple_shape", source), py::make_tuple(1),
                                     py::make_tuple(tile, tile_py, 64, py::make_tuple(32, 64)), py::dict())
                             .cast<std::string>();
  const LaunchConfig one{.grid = Grid{1}, .stream = kDefaultStream};
  shape(one, ptr<float>(tile), ptr<float>(tile_rt), 64, std::make_pair(32, 64));
  EXPECT_TRUE(h["identical"](tile_py, tile_rt).cast<bool>());
  EXPECT_TRUE(h["identical"](tile_rt, tile + py::int_(1)).cast<bool>());
  EXPECT_EQ(shape.artifact_for(one, ptr<float>(tile), ptr<float>(tile_rt), 64, std::make_pair(32, 64))->metadata.hash,
            tile_hash);

  // A heuristic reading the tuple (HAS_BIAS), each way.
  auto& heuristic = JitFunction::get(source, "tuple_heuristic");
  for (const bool bias : {false, true}) {
    SCOPED_TRACE(bias ? "with a bias" : "without a bias");
    auto out_py = h["sentinel"](n, "float32"), out_rt = h["sentinel"](n, "float32");
    const py::object py_bias = bias ? py::object(py::float_(0.75)) : py::object(py::none());
    const auto hash =
        h["launch"](kernel("tuple_heuristic", source), py::make_tuple(grid.x),
                    py::make_tuple(py::make_tuple(x, x), out_py, py::make_tuple(2.0, py_bias), n, 1024), py::dict())
            .cast<std::string>();
    const auto pair = std::make_pair(ptr<float>(x), ptr<float>(x));
    const std::optional<double> cpp_bias = bias ? std::optional<double>(0.75) : std::nullopt;
    heuristic(config, pair, ptr<float>(out_rt), std::make_pair(2.0, cpp_bias), n, 1024);
    EXPECT_TRUE(h["identical"](out_py, out_rt).cast<bool>());
    EXPECT_TRUE(h["close"](out_rt, x * py::float_(3.0) + py::float_(bias ? 0.75 : 0.0)).cast<bool>());
    EXPECT_EQ(
        heuristic.artifact_for(config, pair, ptr<float>(out_rt), std::make_pair(2.0, cpp_bias), n, 1024)->metadata.hash,
        hash);
  }
}

TEST_F(Parity, MatmulWithCompileOptions) {
  py::gil_scoped_acquire gil;
  auto h = helpers();
  const int M = 257, N = 376, K = 208;
  auto a = h["randn"](py::make_tuple(M, K), "float16"), b = h["randn"](py::make_tuple(K, N), "float16");
  auto c_py = h["sentinel"](py::make_tuple(M, N), "float32"), c_rt = h["sentinel"](py::make_tuple(M, N), "float32");
  const Grid grid{cdiv(M, 128), cdiv(N, 128)};
  py::dict options;
  options["num_warps"] = 4;
  options["num_stages"] = 3;
  const auto hash = h["launch"](kernel("matmul_kernel"), py::make_tuple(grid.x, grid.y),
                                py::make_tuple(a, b, c_py, M, N, K, K, 1, N, 1, N, 1, 128, 128, 64), options)
                        .cast<std::string>();
  auto& fn = JitFunction::get(kGpuKernels, "matmul_kernel");
  const LaunchConfig config{.grid = grid, .stream = kDefaultStream, .options = {.num_warps = 4, .num_stages = 3}};
  fn(config, ptr(a, DType::fp16), ptr(b, DType::fp16), ptr<float>(c_rt), M, N, K, K, 1, N, 1, N, 1, 128, 128, 64);
  EXPECT_TRUE(h["identical"](c_py, c_rt).cast<bool>());
  EXPECT_TRUE(h["changed"](c_rt).cast<bool>());
  EXPECT_EQ(fn.artifact_for(config, ptr(a, DType::fp16), ptr(b, DType::fp16), ptr<float>(c_rt), M, N, K, K, 1, N, 1, N,
                            1, 128, 128, 64)
                ->metadata.hash,
            hash);
}

}  // namespace
}  // namespace tritonrt::test

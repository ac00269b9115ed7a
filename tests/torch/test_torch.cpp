// The torch adapter (tritonrt/torch.h) and the operator library (ops/, called through the
// dispatcher as users call it). CPU suites: argument traits and their parity with Triton's
// own specialization, the tensor checks, the operators' Meta kernels and CPU errors, and
// every op kernel compiled for cuda:90. Gpu* suites: each operator against its aten
// reference on fresh random inputs, errors, streams, CUDA graphs and scratch memory.

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "layout.h"
#include "reference.h"
#include "tritonrt/torch.h"

namespace tritonrt::test {
namespace {

using at::ScalarType;

const std::string kAdapterKernels = TRITONRT_TORCH_TEST_KERNELS;
const std::string kOpsKernels = TRITONRT_OPS_KERNEL_DIR;

// Loads the operator library once, as torch.ops.load_library would.
void load_ops() {
  static void* const handle = dlopen(TRITONRT_OPS_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
  ASSERT_NE(handle, nullptr) << "cannot load " << TRITONRT_OPS_LIBRARY << ": " << dlerror();
}

template <class Signature>
c10::TypedOperatorHandle<Signature> op(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Signature>();
}

using BinarySig = at::Tensor(const at::Tensor&, const at::Tensor&, const c10::Scalar&);
using SumSig = at::Tensor(const at::Tensor&, int64_t, bool, std::optional<ScalarType>);
using SoftmaxSig = at::Tensor(const at::Tensor&, int64_t);
using AxpySig = at::Tensor(const at::Tensor&, const std::optional<at::Tensor>&, const std::optional<c10::Scalar>&);
using LayerNormSig = at::Tensor(const at::Tensor&, at::IntArrayRef, const std::optional<at::Tensor>&,
                                const std::optional<at::Tensor>&, double);
using MatmulSig = at::Tensor(const at::Tensor&, const at::Tensor&);

at::Tensor tritonrt_add(const at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha = 1) {
  return op<BinarySig>("tritonrt::add").call(a, b, alpha);
}
at::Tensor tritonrt_sum(const at::Tensor& t, int64_t dim, bool keepdim = false,
                        std::optional<ScalarType> dtype = std::nullopt) {
  return op<SumSig>("tritonrt::sum").call(t, dim, keepdim, dtype);
}
at::Tensor tritonrt_softmax(const at::Tensor& t, int64_t dim = -1) {
  return op<SoftmaxSig>("tritonrt::softmax").call(t, dim);
}
at::Tensor tritonrt_axpy(const at::Tensor& x, const std::optional<at::Tensor>& y = std::nullopt,
                         const std::optional<c10::Scalar>& alpha = std::nullopt) {
  return op<AxpySig>("tritonrt::axpy").call(x, y, alpha);
}
at::Tensor tritonrt_layer_norm(const at::Tensor& x, at::IntArrayRef shape, const std::optional<at::Tensor>& w,
                               const std::optional<at::Tensor>& b, double eps = 1e-5) {
  return op<LayerNormSig>("tritonrt::layer_norm").call(x, shape, w, b, eps);
}
at::Tensor tritonrt_matmul(const at::Tensor& a, const at::Tensor& b) {
  return op<MatmulSig>("tritonrt::matmul").call(a, b);
}

// A CUDA tensor without storage: enough for the checks, which read only device and dtype,
// on a machine without a GPU.
at::Tensor fake_cuda(c10::DeviceIndex index, ScalarType dtype = ScalarType::Float) {
  return at::Tensor(c10::make_intrusive<c10::TensorImpl>(c10::DispatchKeySet(c10::DispatchKey::CUDA),
                                                         c10::scalarTypeToTypeMeta(dtype),
                                                         c10::Device(c10::DeviceType::CUDA, index)));
}

// Runs `f` and returns the ArgumentError message it throws ("" when it throws none).
template <class F>
std::string argument_error(F&& f) {
  try {
    f();
  } catch (const ArgumentError& e) {
    return e.what();
  }
  return "";
}

// --- argument traits ----------------------------------------------------------------------------

TEST(Adapter, DTypesAreTritonsNamesForTorchTypes) {
  const std::pair<ScalarType, const char*> expected[] = {
      {ScalarType::Bool, "u1"},        {ScalarType::Char, "i8"},          {ScalarType::Short, "i16"},
      {ScalarType::Int, "i32"},        {ScalarType::Long, "i64"},         {ScalarType::Byte, "u8"},
      {ScalarType::UInt16, "u16"},     {ScalarType::UInt32, "u32"},       {ScalarType::UInt64, "u64"},
      {ScalarType::Half, "fp16"},      {ScalarType::BFloat16, "bf16"},    {ScalarType::Float, "fp32"},
      {ScalarType::Double, "fp64"},    {ScalarType::Float8_e4m3fn, "fp8e4nv"}, {ScalarType::Float8_e5m2, "fp8e5"},
      {ScalarType::Float8_e4m3fnuz, "fp8e4b8"}, {ScalarType::Float8_e5m2fnuz, "fp8e5b16"}};
  for (const auto& [type, name] : expected) {
    const auto dtype = torch::to_dtype(type);
    ASSERT_TRUE(dtype.has_value()) << c10::toString(type);
    EXPECT_EQ(to_string(*dtype), name) << c10::toString(type);
  }
  for (const ScalarType type : {ScalarType::ComplexFloat, ScalarType::ComplexDouble, ScalarType::QInt8,
                                ScalarType::Float8_e8m0fnu, ScalarType::Float4_e2m1fn_x2, ScalarType::Bits8}) {
    EXPECT_FALSE(torch::to_dtype(type).has_value()) << c10::toString(type);
  }
  static_assert(torch::to_dtype(ScalarType::BFloat16) == DType::bf16, "usable at compile time");
}

TEST(Adapter, TensorPacksItsDataPointerAndDType) {
  const at::Tensor t = at::zeros({4, 3}, at::kHalf).narrow(0, 1, 2);
  Arg a;
  pack_arg(a, t);
  EXPECT_EQ(a.kind, ArgKind::pointer);
  EXPECT_EQ(a.dtype, DType::fp16);
  EXPECT_EQ(a.value.u, reinterpret_cast<std::uintptr_t>(t.data_ptr()));  // the storage offset included

  pack_arg(a, std::optional<at::Tensor>(t));
  EXPECT_EQ(a.kind, ArgKind::pointer);
  Arg none;
  none.kind = ArgKind::sint;
  pack_arg(none, std::optional<at::Tensor>());
  EXPECT_EQ(none.kind, ArgKind::none);
  none.kind = ArgKind::sint;
  pack_arg(none, std::optional<at::Tensor>(at::Tensor()));
  EXPECT_EQ(none.kind, ArgKind::none) << "an optional holding an undefined tensor is None";
}

TEST(Adapter, ScalarsPackAsThePythonNumberWould) {
  Arg a;
  pack_arg(a, c10::Scalar(true));
  EXPECT_EQ(a.kind, ArgKind::boolean);
  EXPECT_EQ(a.value.u, 1u);
  pack_arg(a, c10::Scalar(-7));
  EXPECT_EQ(a.kind, ArgKind::sint);
  EXPECT_EQ(a.value.i, -7);
  pack_arg(a, c10::Scalar(2.5));
  EXPECT_EQ(a.kind, ArgKind::real);
  EXPECT_EQ(a.value.f, 2.5);
  pack_arg(a, c10::Scalar(std::uint64_t{1} << 63));
  EXPECT_EQ(a.kind, ArgKind::uint);
  EXPECT_EQ(a.value.u, std::uint64_t{1} << 63);
  pack_arg(a, std::optional<c10::Scalar>());
  EXPECT_EQ(a.kind, ArgKind::none);
  pack_arg(a, ScalarType::BFloat16);
  EXPECT_EQ(a.kind, ArgKind::dtype);
  EXPECT_EQ(a.dtype, DType::bf16);
}

TEST(Adapter, UnsupportedArgumentsAreArgumentErrors) {
  Arg a;
  EXPECT_NE(argument_error([&] { pack_arg(a, at::Tensor()); }).find("undefined at::Tensor"), std::string::npos);
  EXPECT_NE(argument_error([&] { pack_arg(a, at::zeros({2}, at::kComplexFloat)); }).find("ComplexFloat has no Triton type"),
            std::string::npos);
  EXPECT_NE(argument_error([&] { pack_arg(a, c10::Scalar(c10::complex<double>(1, 2))); }).find("complex c10::Scalar"),
            std::string::npos);
  EXPECT_NE(argument_error([&] { pack_arg(a, ScalarType::QInt8); }).find("QInt8 has no Triton type"), std::string::npos);
}

// The specialization of a call with torch arguments is the one Triton's JIT builds for the
// same Python values (a tensor stands in as an address with its dtype).
TEST(Adapter, SpecializationMatchesTritonsForTorchArguments) {
  auto& fn = JitFunction::get(kAdapterKernels, "arguments_kernel");
  const at::Tensor x = at::zeros({64}, at::kBFloat16);
  const auto address = std::to_string(reinterpret_cast<std::uintptr_t>(x.data_ptr()));
  const std::pair<Specialization, std::string> cases[] = {
      {fn.specialize(x, std::optional<at::Tensor>(), c10::Scalar(0.5), c10::Scalar(1), c10::Scalar(true), ScalarType::Half),
       "[P(" + address + ", 'bfloat16'), None, 0.5, 1, True, tl.float16]"},
      {fn.specialize(x, std::optional<at::Tensor>(x), c10::Scalar(3), c10::Scalar(int64_t{1} << 40), c10::Scalar(false),
                     ScalarType::Float8_e4m3fn),
       "[P(" + address + ", 'bfloat16'), P(" + address + ", 'bfloat16'), 3, 2**40, False, tl.float8e4nv]"},
  };
  for (const auto& [spec, python] : cases) {
    EXPECT_EQ(spec.repr(), reference_specialization(kAdapterKernels, "arguments_kernel", python)) << python;
  }
}

// --- tensor checks ------------------------------------------------------------------------------

TEST(Adapter, TensorChecksNameTheCallerAndParameter) {
  const at::Tensor cpu = at::zeros({2});
  EXPECT_EQ(argument_error([&] { torch::TensorChecks("my::op").required(cpu, "input"); }),
            "my::op: argument 'input' is a CPU tensor; tritonrt launches kernels on CUDA tensors only");
  EXPECT_EQ(argument_error([&] { torch::TensorChecks("my::op").required(at::Tensor(), "input"); }),
            "my::op: argument 'input' is an undefined tensor; a defined CUDA tensor is required");
  EXPECT_EQ(argument_error([&] { torch::TensorChecks("my::op").required(fake_cuda(0), "a").required(fake_cuda(1), "b"); }),
            "my::op: argument 'b' is on cuda:1 but the tensor arguments before it are on cuda:0");
  EXPECT_EQ(argument_error([&] { torch::TensorChecks("my::op").required(fake_cuda(0, ScalarType::ComplexFloat), "z"); }),
            "my::op: argument 'z' has dtype ComplexFloat, which Triton has no type for");
  EXPECT_EQ(argument_error([&] { torch::TensorChecks("my::op").required(at::zeros({2}, at::device(at::kMeta)), "m"); }),
            "my::op: argument 'm' is on device meta; tritonrt launches kernels on CUDA tensors only");

  torch::TensorChecks ok("my::op");
  ok.required(fake_cuda(1), "a").optional(std::nullopt, "b").optional(fake_cuda(1, ScalarType::Half), "c");
  EXPECT_EQ(ok.device(), 1);
}

TEST(Adapter, LaunchChecksNameTheKernelAndParameter) {
  auto& fn = JitFunction::get(kAdapterKernels, "copy_tile_kernel");
  const at::Tensor cpu = at::zeros({16});
  EXPECT_EQ(argument_error([&] { torch::launch(fn, {.grid = {1}}, fake_cuda(0), cpu, 16, 16); }),
            "tritonrt: kernel 'copy_tile_kernel', parameter 'out_ptr' is a CPU tensor; tritonrt launches kernels on "
            "CUDA tensors only");
  EXPECT_EQ(argument_error([&] { torch::launch(fn, {.grid = {1}}, fake_cuda(0), fake_cuda(1), 16, 16); }),
            "tritonrt: kernel 'copy_tile_kernel', parameter 'out_ptr' is on cuda:1 but the tensor arguments before it "
            "are on cuda:0");
}

TEST(Adapter, DeviceScopeNeedsADeviceIndex) {
  EXPECT_EQ(argument_error([] { const torch::DeviceScope scope(-1); }),
            "tritonrt: DeviceScope needs a CUDA device index, got -1");
}

// --- the ops' index planning (ops/layout.h) -----------------------------------------------------

// A random strided view: `sizes`, laid out in a random dim order, every dim stepped by 1 or 2.
struct View {
  std::vector<int64_t> sizes, strides;
};

View random_view(std::mt19937_64& rng, std::vector<int64_t> sizes) {
  std::vector<std::size_t> order(sizes.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  View v{sizes, std::vector<int64_t>(sizes.size())};
  int64_t stride = 1 + static_cast<int64_t>(rng() % 2);
  for (const std::size_t d : order) {
    v.strides[d] = stride;
    stride *= std::max<int64_t>(sizes[d], 1) * (1 + static_cast<int64_t>(rng() % 2));
  }
  return v;
}

// The offset of element `index` (row-major over `shape`) in an operand broadcast to `shape`.
int64_t broadcast_offset(const std::vector<int64_t>& shape, const View& v, int64_t index) {
  int64_t offset = 0;
  const auto nd = static_cast<int64_t>(shape.size());
  for (int64_t d = nd - 1; d >= 0; --d) {
    const int64_t i = index % shape[d];
    index /= shape[d];
    const int64_t td = d - (nd - static_cast<int64_t>(v.sizes.size()));
    if (td >= 0 && v.sizes[td] != 1) offset += i * v.strides[td];
  }
  return offset;
}

TEST(OpsLayout, CollapsedLayoutAddressesEveryElementAsTheOperandsDo) {
  std::mt19937_64 rng(std::random_device{}());
  int collapsed = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const std::size_t nd = rng() % 6;
    std::vector<int64_t> shape(nd);
    for (auto& s : shape) s = 1 + static_cast<int64_t>(rng() % 4);
    // Each operand keeps a random suffix of the dims and broadcasts some of them (size 1).
    auto operand_sizes = [&] {
      std::vector<int64_t> sizes(shape.end() - static_cast<std::ptrdiff_t>(rng() % (nd + 1)), shape.end());
      for (auto& s : sizes) s = rng() % 3 == 0 ? 1 : s;
      return sizes;
    };
    const View a = random_view(rng, operand_sizes()), b = random_view(rng, operand_sizes());
    const bool with_a = rng() % 4 != 0;
    const ops::Operand oa{a.sizes, a.strides}, ob{b.sizes, b.strides};
    ops::ElementwiseLayout layout;
    if (!ops::collapse(shape, with_a ? &oa : nullptr, ob, layout)) {
      EXPECT_GT(nd, static_cast<std::size_t>(ops::kMaxDims));
      continue;
    }
    ++collapsed;
    int64_t n = 1;
    for (const int64_t s : shape) n *= s;
    for (int64_t i = 0; i < n; ++i) {
      int64_t rest = i, offset_a = 0, offset_b = 0;
      for (int k = ops::kMaxDims - 1; k >= 0; --k) {
        const int64_t idx = rest % layout.sizes[k];
        rest /= layout.sizes[k];
        offset_a += idx * layout.strides[0][k];
        offset_b += idx * layout.strides[1][k];
      }
      ASSERT_EQ(offset_b, broadcast_offset(shape, b, i)) << "trial " << trial << " element " << i;
      ASSERT_EQ(offset_a, with_a ? broadcast_offset(shape, a, i) : 0) << "trial " << trial << " element " << i;
    }
  }
  EXPECT_GT(collapsed, 1000);
}

TEST(OpsLayout, CollapseMergesContiguousOperandsIntoOneDim) {
  const std::vector<int64_t> shape{3, 4, 5}, contiguous{20, 5, 1}, bias{5}, unit{1};
  ops::ElementwiseLayout layout;
  const ops::Operand x{shape, contiguous}, row{bias, unit};
  ASSERT_TRUE(ops::collapse(shape, &x, x, layout));
  EXPECT_EQ(layout.ndim, 1);
  EXPECT_EQ(layout.sizes[3], 60);
  EXPECT_EQ(layout.strides[0][3], 1);
  ASSERT_TRUE(ops::collapse(shape, &x, row, layout));  // a broadcast bias: (12, 5) with strides (0, 1)
  EXPECT_EQ(layout.ndim, 2);
  EXPECT_EQ(layout.sizes[2], 12);
  EXPECT_EQ(layout.strides[1][2], 0);
  const std::vector<int64_t> six{2, 2, 2, 2, 2, 2}, even{2, 1, 2, 1, 2, 1}, odd{1, 2, 1, 2, 1, 2};
  const std::vector<int64_t> even_strides{4, 0, 2, 0, 1, 0}, odd_strides{0, 4, 0, 2, 0, 1};
  const ops::Operand alternating_a{even, even_strides}, alternating_b{odd, odd_strides};
  EXPECT_FALSE(ops::collapse(six, &alternating_a, alternating_b, layout));
}

TEST(OpsLayout, ReductionPlanAddressesEveryElementAsTheTensorDoes) {
  std::mt19937_64 rng(std::random_device{}());
  int planned = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<int64_t> sizes(rng() % 5);
    for (auto& s : sizes) s = static_cast<int64_t>(rng() % 5);
    const View v = random_view(rng, sizes);
    const int64_t nd = static_cast<int64_t>(sizes.size());
    const int64_t dim = nd == 0 ? 0 : static_cast<int64_t>(rng() % nd);
    ops::Reduction plan;
    if (!ops::plan_reduction(v.sizes, v.strides, dim, plan)) continue;
    ++planned;
    EXPECT_LE(plan.block_j * plan.block_r, ops::kReductionTile);
    EXPECT_EQ(plan.block_j & (plan.block_j - 1), 0);
    EXPECT_EQ(plan.block_r & (plan.block_r - 1), 0);
    // Row j and element r are (outer multi-index, r, inner multi-index), row-major.
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= sizes[d];
    for (int64_t d = dim + 1; d < nd; ++d) inner *= sizes[d];
    const int64_t length = nd == 0 ? 1 : sizes[dim];
    ASSERT_EQ(plan.rows, outer * inner);
    ASSERT_EQ(plan.length, length);
    for (int64_t j = 0; j < plan.rows; ++j) {
      for (int64_t r = 0; r < length; ++r) {
        int64_t rest = (j / inner) * length * inner + r * inner + j % inner, want = 0;
        for (int64_t d = nd - 1; d >= 0; --d) {
          want += (rest % sizes[d]) * v.strides[d];
          rest /= sizes[d];
        }
        const int64_t got = (j / plan.inner) * plan.stride_outer + (j % plan.inner) * plan.stride_inner + r * plan.stride_r;
        ASSERT_EQ(got, want) << "trial " << trial << " row " << j << " element " << r;
      }
    }
  }
  EXPECT_GT(planned, 500);
}

TEST(OpsLayout, ReductionPlanOfContiguousAndColumnMajorTensors) {
  const std::vector<int64_t> sizes{3, 4, 5, 6}, strides{120, 30, 6, 1};
  ops::Reduction plan;
  for (int64_t dim = 0; dim < 4; ++dim) EXPECT_TRUE(ops::plan_reduction(sizes, strides, dim, plan)) << dim;
  ASSERT_TRUE(ops::plan_reduction(sizes, strides, 3, plan));
  EXPECT_EQ(plan.inner, 1);
  EXPECT_EQ(plan.stride_r, 1);
  EXPECT_EQ(plan.block_r, 8);
  EXPECT_EQ(plan.block_j, 64);
  const std::vector<int64_t> column_major{1, 3, 12, 60};  // dims 0..2 are no evenly strided block
  EXPECT_FALSE(ops::plan_reduction(sizes, column_major, 3, plan));
}

// --- the operators without a GPU ----------------------------------------------------------------

class Ops : public ::testing::Test {
 protected:
  void SetUp() override { load_ops(); }
  static at::Tensor meta(at::IntArrayRef sizes, ScalarType dtype = ScalarType::Float) {
    return at::empty(sizes, at::TensorOptions().dtype(dtype).device(at::kMeta));
  }
};

TEST_F(Ops, SchemasAreRegistered) {
  for (const char* name : {"tritonrt::add", "tritonrt::sum", "tritonrt::softmax", "tritonrt::axpy",
                           "tritonrt::layer_norm", "tritonrt::matmul"}) {
    const auto handle = c10::Dispatcher::singleton().findSchema({name, ""});
    ASSERT_TRUE(handle.has_value()) << name;
    for (const auto key : {c10::DispatchKey::CUDA, c10::DispatchKey::Meta, c10::DispatchKey::CPU}) {
      EXPECT_TRUE(handle->hasKernelForDispatchKey(key)) << name << " " << key;
    }
  }
  EXPECT_EQ(c10::toString(c10::Dispatcher::singleton().findSchema({"tritonrt::axpy", ""})->schema()),
            "tritonrt::axpy(Tensor x, Tensor? y=None, Scalar? alpha=None) -> Tensor");
}

// Meta kernels agree with aten's own on shape and dtype.
TEST_F(Ops, MetaKernelsMatchAten) {
  const auto same = [](const at::Tensor& got, const at::Tensor& want) {
    EXPECT_TRUE(got.is_meta());
    EXPECT_EQ(got.sizes(), want.sizes());
    EXPECT_EQ(got.scalar_type(), want.scalar_type());
  };
  same(tritonrt_add(meta({3, 1}), meta({1, 4}, ScalarType::Half), 2), at::add(meta({3, 1}), meta({1, 4}, at::kHalf), 2));
  same(tritonrt_add(meta({5}, ScalarType::Int), meta({}, ScalarType::Double)),
       at::add(meta({5}, at::kInt), meta({}, at::kDouble)));
  same(tritonrt_add(meta({2, 3}, ScalarType::Bool), meta({3}, ScalarType::Char)),
       at::add(meta({2, 3}, at::kBool), meta({3}, at::kChar)));
  same(tritonrt_sum(meta({3, 4, 5}), 1, true), at::sum(meta({3, 4, 5}), {1}, true));
  same(tritonrt_sum(meta({3, 4, 5}, ScalarType::Char), -1), at::sum(meta({3, 4, 5}, at::kChar), {-1}));
  same(tritonrt_sum(meta({3, 4}, ScalarType::Half), 0, false, ScalarType::Float),
       at::sum(meta({3, 4}, at::kHalf), {0}, false, at::kFloat));
  same(tritonrt_sum(meta({}), 0), at::sum(meta({}), {0}));
  same(tritonrt_softmax(meta({2, 7}, ScalarType::BFloat16), 0), at::softmax(meta({2, 7}, at::kBFloat16), 0));
  same(tritonrt_axpy(meta({3, 4}), meta({4}, ScalarType::Double), 2), at::add(meta({4}, at::kDouble), meta({3, 4}), 2));
  same(tritonrt_axpy(meta({3, 4}, ScalarType::Half)), meta({3, 4}, ScalarType::Half));
  // aten's layer_norm has its Meta kernel in Python only: the shape and dtype are the input's.
  same(tritonrt_layer_norm(meta({2, 3, 4}, ScalarType::Half), {3, 4}, meta({3, 4}), std::nullopt),
       meta({2, 3, 4}, ScalarType::Half));
  same(tritonrt_matmul(meta({3, 4}, ScalarType::Half), meta({4, 5}, ScalarType::Half)),
       at::matmul(meta({3, 4}, at::kHalf), meta({4, 5}, at::kHalf)));
}

TEST_F(Ops, MetaKernelsRejectWhatTheCudaKernelsReject) {
  EXPECT_THROW(tritonrt_add(meta({3}), meta({4})), c10::Error);  // aten's broadcast error
  EXPECT_NE(argument_error([&] { tritonrt_add(meta({3}, ScalarType::Int), meta({3}, ScalarType::Int), 0.5); })
                .find("alpha must not be a floating point number"),
            std::string::npos);
  EXPECT_NE(argument_error([&] { tritonrt_add(meta({3}, ScalarType::ComplexFloat), meta({3})); })
                .find("argument 'self' has dtype ComplexFloat"),
            std::string::npos);
  EXPECT_NE(argument_error([&] { tritonrt_softmax(meta({3}, ScalarType::Long)); }).find("floating-point tensor"),
            std::string::npos);
  EXPECT_THROW(tritonrt_sum(meta({3}), 1), c10::IndexError);
  EXPECT_NE(argument_error([&] { tritonrt_layer_norm(meta({2, 3}), {4}, std::nullopt, std::nullopt); })
                .find("trailing dims"),
            std::string::npos);
  EXPECT_NE(argument_error([&] { tritonrt_matmul(meta({3, 4}, ScalarType::Half), meta({3, 4}, ScalarType::Half)); })
                .find("cannot be multiplied"),
            std::string::npos);
  EXPECT_NE(argument_error([&] { tritonrt_matmul(meta({3, 4}), meta({4, 3})); }).find("takes Half or BFloat16"),
            std::string::npos);
}

TEST_F(Ops, CpuTensorsAreRejectedNamingTheArgument) {
  const at::Tensor cpu = at::ones({3});
  EXPECT_EQ(argument_error([&] { tritonrt_add(cpu, cpu); }),
            "tritonrt::add: argument 'self' is a CPU tensor; tritonrt launches kernels on CUDA tensors only");
  EXPECT_NE(argument_error([&] { tritonrt_sum(cpu, 0); }).find("tritonrt::sum: argument 'self' is a CPU tensor"),
            std::string::npos);
  EXPECT_NE(argument_error([&] { tritonrt_softmax(cpu); }).find("tritonrt::softmax: argument 'self'"), std::string::npos);
  EXPECT_NE(argument_error([&] { tritonrt_axpy(cpu, std::nullopt, 2); }).find("tritonrt::axpy: argument 'x'"),
            std::string::npos);
  EXPECT_NE(argument_error([&] { tritonrt_layer_norm(cpu, {3}, std::nullopt, std::nullopt); })
                .find("tritonrt::layer_norm: argument 'input'"),
            std::string::npos);
  EXPECT_NE(argument_error([&] { tritonrt_matmul(cpu.view({1, 3}), cpu.view({3, 1})); })
                .find("tritonrt::matmul: argument 'a'"),
            std::string::npos);
  // An undefined tensor next to a CPU one dispatches to CPU as well.
  EXPECT_EQ(argument_error([&] { tritonrt_add(at::Tensor(), cpu); }),
            "tritonrt::add: argument 'self' is an undefined tensor; a defined CUDA tensor is required");
}

TEST_F(Ops, CudaTensorsOnDifferentDevicesAreRejected) {
  EXPECT_EQ(argument_error([&] { tritonrt_add(fake_cuda(0), fake_cuda(1)); }),
            "tritonrt::add: argument 'other' is on cuda:1 but the tensor arguments before it are on cuda:0");
  EXPECT_NE(argument_error([&] { tritonrt_layer_norm(fake_cuda(1), {3}, fake_cuda(0), std::nullopt); })
                .find("argument 'weight' is on cuda:0"),
            std::string::npos);
}

// Every op kernel, in the variants the operators launch, compiles for Hopper.
TEST(OpsKernels, CompileForHopper) {
  const Target hopper = Target::parse("cuda:90");
  const auto p = [](DType t) { return DevicePtr{reinterpret_cast<const void*>(std::uintptr_t{1} << 20), t}; };
  auto& add = JitFunction::get(kOpsKernels + "/tritonrt_elementwise.py", "add_kernel");
  add.compile(hopper, {}, p(DType::fp16), p(DType::fp16), p(DType::fp16), scalar(DType::fp32, 2.0), 1000, 1024, DType::fp32);
  add.compile(hopper, {}, std::nullopt, p(DType::bf16), p(DType::bf16), scalar(DType::fp32, 1), 17, 1024, DType::fp32);
  add.compile(hopper, {}, p(DType::i8), p(DType::u1), p(DType::i8), scalar(DType::i64, 3), 4096, 1024, DType::i64);
  add.compile(hopper, {}, p(DType::u1), p(DType::u1), p(DType::u1), scalar(DType::i64, 1), 77, 1024, DType::i64);
  add.compile(hopper, {}, p(DType::fp64), p(DType::fp32), p(DType::fp64), scalar(DType::fp64, 0.5), 33, 1024, DType::fp64);
  add.compile(hopper, {}, p(DType::fp8e4nv), p(DType::fp32), p(DType::fp32), scalar(DType::fp32, 1), 32, 1024, DType::fp32);
  auto& strided = JitFunction::get(kOpsKernels + "/tritonrt_elementwise.py", "add_strided_kernel");
  strided.compile(hopper, {}, p(DType::fp32), p(DType::fp16), p(DType::fp32), scalar(DType::fp32, 1), 60, 3, 4, 5, 0, 20,
                  5, 1, 0, 0, 1, 0, 1024, DType::fp32);
  strided.compile(hopper, {}, std::nullopt, p(DType::i64), p(DType::i64), scalar(DType::i64, -2), 60, 3, 4, 5, 0, 0, 0, 0,
                  60, 1, 15, 3, 1024, DType::i64);

  auto& sum = JitFunction::get(kOpsKernels + "/tritonrt_reduction.py", "sum_kernel");
  sum.compile(hopper, {}, p(DType::fp16), p(DType::fp16), 17, 33, 1, 33, 1, 0, 32, 64, DType::fp32);
  sum.compile(hopper, {}, p(DType::fp32), p(DType::i64), 20, 5000, 4, 20000, 4, 1, 4, 512, DType::i64);
  sum.compile(hopper, {}, p(DType::u1), p(DType::i64), 3, 7, 1, 7, 1, 0, 4, 8, DType::i64);
  sum.compile(hopper, {}, p(DType::fp64), p(DType::fp64), 1, 1, 1, 0, 0, 0, 1, 1, DType::fp64);
  sum.compile(hopper, {}, p(DType::fp32), p(DType::u1), 64, 9, 1, 9, 1, 0, 128, 16, DType::i64);
  auto& softmax = JitFunction::get(kOpsKernels + "/tritonrt_reduction.py", "softmax_kernel");
  for (const DType t : {DType::fp16, DType::bf16, DType::fp32}) {
    softmax.compile(hopper, {}, p(t), p(t), 7, 1000, 1, 1000, 1, 0, 2, 1024, DType::fp32);
  }
  softmax.compile(hopper, {}, p(DType::fp64), p(DType::fp64), 12, 3, 4, 12, 4, 1, 16, 4, DType::fp64);

  auto& layer_norm = JitFunction::get(kOpsKernels + "/tritonrt_layer_norm.py", "layer_norm_kernel");
  CompileOptions eight_warps;
  eight_warps.num_warps = 8;
  layer_norm.compile(hopper, eight_warps, p(DType::fp16), std::nullopt, std::nullopt, p(DType::fp16), 4097,
                     scalar(DType::fp32, 1e-5), 4096, DType::fp32);
  layer_norm.compile(hopper, {}, p(DType::bf16), p(DType::fp32), p(DType::bf16), p(DType::bf16), 7,
                     scalar(DType::fp32, 1e-5), 8, DType::fp32);
  layer_norm.compile(hopper, {}, p(DType::fp64), p(DType::fp64), p(DType::fp64), p(DType::fp64), 8,
                     scalar(DType::fp64, 1e-5), 8, DType::fp64);

  auto& matmul = JitFunction::get(kOpsKernels + "/tritonrt_matmul.py", "matmul_kernel");
  CompileOptions matmul_options;
  matmul_options.num_warps = 8;
  matmul_options.num_stages = 3;
  for (const DType t : {DType::fp16, DType::bf16}) {
    const auto art = matmul.compile(hopper, matmul_options, p(t), p(t), p(t), 256, 512, 128, 128, 1, 512, 1, 512, 1, 128,
                                    128, 64, 8);
    EXPECT_GT(art->metadata.shared, 48 * 1024) << "the matmul is meant to need opt-in shared memory";
    // Odd sizes and a transposed operand: no divisibility, unit strides elsewhere.
    matmul.compile(hopper, matmul_options, p(t), p(t), p(t), 17, 33, 65, 1, 17, 33, 1, 33, 1, 128, 128, 64, 8);
  }
}

TEST(OpsKernels, DescriptorKernelNeedsGlobalScratch) {
  auto& fn = JitFunction::get(kAdapterKernels, "copy_tile_kernel");
  const DevicePtr p{reinterpret_cast<const void*>(std::uintptr_t{1} << 20), DType::fp32};
  const auto art = fn.compile(Target::parse("cuda:90"), {}, p, p, 1024, 256);
  EXPECT_GT(art->metadata.global_scratch_size, 0) << "the GPU scratch test relies on it";
}

// --- the operators on a GPU ---------------------------------------------------------------------

// Tolerances per dtype for results computed in a different order than aten's, or rounded
// from fp32 where aten rounds a slightly different fp32 value.
struct Tolerance {
  double rtol, atol;
};

class GpuOps : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!::torch::cuda::is_available()) GTEST_SKIP() << "needs a CUDA GPU: torch.cuda is not available here";
    load_ops();
    const std::uint64_t seed = std::random_device{}();
    at::manual_seed(seed);
    RecordProperty("seed", std::to_string(seed));
    trace_.emplace(__FILE__, __LINE__, "random seed " + std::to_string(seed));
  }
  void TearDown() override { trace_.reset(); }

  static at::TensorOptions cuda(ScalarType dtype) { return at::TensorOptions().dtype(dtype).device(at::kCUDA); }

  // Random values of `dtype` on the GPU: normal for floats, small integers otherwise.
  static at::Tensor random(at::IntArrayRef sizes, ScalarType dtype) {
    if (dtype == ScalarType::Bool) return at::randint(0, 2, sizes, cuda(ScalarType::Long)).to(dtype);
    if (c10::isIntegralType(dtype, false)) {
      const int64_t low = dtype == ScalarType::Byte ? 0 : -50;
      return at::randint(low, 50, sizes, cuda(ScalarType::Long)).to(dtype);
    }
    return at::randn(sizes, cuda(ScalarType::Float)).to(dtype);
  }

  static Tolerance tolerance(ScalarType dtype, Tolerance fp32) {
    switch (dtype) {
      case ScalarType::Half: return {std::max(fp32.rtol, 2e-3), std::max(fp32.atol, 1e-3)};
      case ScalarType::BFloat16: return {std::max(fp32.rtol, 1.6e-2), std::max(fp32.atol, 1e-2)};
      case ScalarType::Float: return fp32;
      case ScalarType::Double: return {1e-9, 1e-12};
      default: return {0, 0};  // integers and bool: exact
    }
  }

  // Same shape, dtype and values (within tolerance, NaN where the reference has NaN).
  static ::testing::AssertionResult close(const at::Tensor& got, const at::Tensor& want, Tolerance tol) {
    if (!got.is_cuda()) return ::testing::AssertionFailure() << "result is on " << got.device();
    if (got.sizes() != want.sizes()) {
      return ::testing::AssertionFailure() << "shape " << got.sizes() << ", expected " << want.sizes();
    }
    if (got.scalar_type() != want.scalar_type()) {
      return ::testing::AssertionFailure() << "dtype " << got.scalar_type() << ", expected " << want.scalar_type();
    }
    if (got.numel() == 0) return ::testing::AssertionSuccess();
    const at::Tensor g = got.to(at::kDouble), w = want.to(at::kDouble);
    const at::Tensor bad = g.isclose(w, tol.rtol, tol.atol, /*equal_nan=*/true).logical_not();
    const int64_t count = bad.sum().item<int64_t>();
    if (count == 0) return ::testing::AssertionSuccess();
    const int64_t first = bad.flatten().nonzero()[0].item<int64_t>();
    return ::testing::AssertionFailure() << count << " of " << got.numel() << " elements differ beyond rtol "
                                         << tol.rtol << ", atol " << tol.atol << "; first at flat index " << first
                                         << ": got " << g.flatten()[first].item<double>() << ", expected "
                                         << w.flatten()[first].item<double>() << "; max abs error "
                                         << (g - w).abs().nan_to_num(0).max().item<double>();
  }

 private:
  std::optional<::testing::ScopedTrace> trace_;
};

TEST_F(GpuOps, AddMatchesAtenOverShapesDtypesAndAlpha) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{0}, {0}},         {{1}, {1}},           {{1000003}, {1000003}}, {{17, 33}, {17, 33}},   {{3, 1, 5}, {4, 1}},
      {{}, {7}},          {{8, 0, 3}, {3}},     {{2, 3, 4, 5, 6}, {5, 1}},
      {{2, 1, 2, 1, 2, 1}, {1, 2, 1, 2, 1, 2}}};  // alternating broadcasts: more dims than the strided kernel takes
  const std::pair<ScalarType, ScalarType> dtypes[] = {
      {ScalarType::Float, ScalarType::Float}, {ScalarType::Half, ScalarType::Half},
      {ScalarType::BFloat16, ScalarType::BFloat16}, {ScalarType::Double, ScalarType::Double},
      {ScalarType::Half, ScalarType::Float}, {ScalarType::Int, ScalarType::Half},
      {ScalarType::Int, ScalarType::Int}, {ScalarType::Long, ScalarType::Char},
      {ScalarType::Byte, ScalarType::Byte}, {ScalarType::Bool, ScalarType::Bool},
      {ScalarType::Bool, ScalarType::Char}};
  for (const auto& [sa, sb] : shapes) {
    for (const auto& [ta, tb] : dtypes) {
      const at::Tensor a = random(sa, ta), b = random(sb, tb);
      const ScalarType result = at::result_type(a, b);
      std::vector<c10::Scalar> alphas = {1};
      if (c10::isFloatingType(result)) alphas = {1, -0.5, 3};
      else if (result != ScalarType::Bool) alphas = {1, 3, -2};
      for (const auto& alpha : alphas) {
        SCOPED_TRACE(::testing::Message() << "a " << a.sizes() << " " << ta << ", b " << b.sizes() << " " << tb
                                          << ", alpha " << alpha);
        EXPECT_TRUE(close(tritonrt_add(a, b, alpha), at::add(a, b, alpha), tolerance(result, {1.3e-6, 1e-5})));
      }
    }
  }
}

TEST_F(GpuOps, AddReadsNonContiguousInputs) {
  const at::Tensor base = random({40, 66}, ScalarType::Float);
  const at::Tensor transposed = random({33, 40}, ScalarType::Float).t();        // 40 x 33, column-major
  const at::Tensor stepped = base.slice(1, 0, 66, 2);                          // 40 x 33, stride 2
  const at::Tensor expanded = random({1, 33}, ScalarType::Half).expand({40, 33});
  const at::Tensor offset = base.slice(0, 1, 40).slice(1, 3, 36);               // 39 x 33 view with an offset
  for (const auto& [a, b] : std::vector<std::pair<at::Tensor, at::Tensor>>{
           {transposed, stepped}, {stepped, expanded}, {expanded, transposed}, {offset, stepped.slice(0, 0, 39)},
           {random({4, 6, 8}, ScalarType::Float).permute({2, 0, 1}), random({8, 4, 6}, ScalarType::Float)}}) {
    SCOPED_TRACE(::testing::Message() << a.sizes() << a.strides() << " + " << b.sizes() << b.strides());
    EXPECT_TRUE(close(tritonrt_add(a, b, 2), at::add(a, b, 2), {1.3e-6, 1e-5}));
  }
}

TEST_F(GpuOps, AddRejectsAlphaAtenRejects) {
  const at::Tensor i = random({4}, ScalarType::Int);
  EXPECT_NE(argument_error([&] { tritonrt_add(i, i, 0.5); }).find("alpha must not be a floating point number"),
            std::string::npos);
  const at::Tensor f = random({4}, ScalarType::Float);
  EXPECT_NE(argument_error([&] { tritonrt_add(f, f, true); }).find("boolean alpha"), std::string::npos);
  const at::Tensor c = random({4}, ScalarType::Char);
  // Does not fit int8: rejected as aten rejects it (torch's checked Scalar conversion).
  try {
    tritonrt_add(c, c, 1000);
    ADD_FAILURE() << "alpha 1000 for int8 tensors was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("int8_t without overflow"), std::string::npos) << e.what();
  }
}

TEST_F(GpuOps, SumMatchesAten) {
  struct Case {
    std::vector<int64_t> shape;
    int64_t dim;
    bool keepdim;
  };
  const Case cases[] = {{{0}, 0, false},     {{5, 0}, 1, false},   {{0, 5}, 1, true},   {{1000003}, 0, false},
                        {{17, 33}, 0, false}, {{17, 33}, -1, true}, {{3, 4, 5}, 1, true}, {{}, 0, false},
                        {{64, 4097}, 1, false}, {{7, 3, 2049}, 2, false}, {{2049, 3}, 0, false}};
  const std::pair<ScalarType, std::optional<ScalarType>> dtypes[] = {
      {ScalarType::Float, std::nullopt}, {ScalarType::Half, std::nullopt},    {ScalarType::BFloat16, std::nullopt},
      {ScalarType::Double, std::nullopt}, {ScalarType::Int, std::nullopt},    {ScalarType::Bool, std::nullopt},
      {ScalarType::Half, ScalarType::Float}, {ScalarType::Float, ScalarType::Half}, {ScalarType::Char, ScalarType::Int}};
  for (const auto& c : cases) {
    for (const auto& [type, dtype] : dtypes) {
      const at::Tensor x = random(c.shape, type);
      SCOPED_TRACE(::testing::Message() << x.sizes() << " " << type << " dim " << c.dim << " keepdim " << c.keepdim
                                        << " dtype " << (dtype ? c10::toString(*dtype) : "None"));
      const at::Tensor want = at::sum(x, {c.dim}, c.keepdim, dtype);
      EXPECT_TRUE(close(tritonrt_sum(x, c.dim, c.keepdim, dtype), want, tolerance(want.scalar_type(), {1e-5, 1e-4})));
    }
  }
}

TEST_F(GpuOps, SumReadsNonContiguousInputs) {
  const at::Tensor inputs[] = {random({33, 17}, ScalarType::Float).t(), random({4, 6, 8}, ScalarType::Float).slice(1, 0, 6, 2),
                               random({4, 6, 8}, ScalarType::Float).permute({1, 2, 0}),
                               random({1, 300}, ScalarType::Half).expand({5, 300})};
  for (const auto& x : inputs) {
    for (int64_t dim = 0; dim < x.dim(); ++dim) {
      SCOPED_TRACE(::testing::Message() << x.sizes() << x.strides() << " dim " << dim);
      const at::Tensor want = at::sum(x, {dim});
      EXPECT_TRUE(close(tritonrt_sum(x, dim), want, tolerance(want.scalar_type(), {1e-5, 1e-4})));
    }
  }
}

TEST_F(GpuOps, SoftmaxMatchesAten) {
  const std::pair<std::vector<int64_t>, int64_t> cases[] = {{{0, 5}, -1},   {{1, 1}, -1},     {{7, 1000}, -1},
                                                            {{3, 5000}, 1}, {{4, 3, 5}, 1},   {{4, 3, 5}, 0},
                                                            {{2049}, 0},    {{}, 0},          {{300, 7}, -1}};
  for (const auto& [shape, dim] : cases) {
    for (const ScalarType type : {ScalarType::Float, ScalarType::Half, ScalarType::BFloat16, ScalarType::Double}) {
      const at::Tensor x = random(shape, type) * 3;
      SCOPED_TRACE(::testing::Message() << x.sizes() << " " << type << " dim " << dim);
      EXPECT_TRUE(close(tritonrt_softmax(x, dim), at::softmax(x, dim), tolerance(type, {1e-5, 1e-6})));
    }
  }
}

TEST_F(GpuOps, SoftmaxHandlesInfinitiesAndStrides) {
  at::Tensor x = random({6, 3000}, ScalarType::Float);
  x.slice(1, 0, 1500).fill_(-INFINITY);  // a first chunk of only -inf must not poison the row
  x[2].fill_(-INFINITY);                 // an all -inf row is NaN, as in aten
  x[3][7] = INFINITY;
  EXPECT_TRUE(close(tritonrt_softmax(x), at::softmax(x, -1), {1e-5, 1e-6}));
  const at::Tensor t = random({50, 40}, ScalarType::Float).t();
  EXPECT_TRUE(close(tritonrt_softmax(t), at::softmax(t, -1), {1e-5, 1e-6}));
  EXPECT_TRUE(close(tritonrt_softmax(t, 0), at::softmax(t, 0), {1e-5, 1e-6}));
}

TEST_F(GpuOps, AxpyIsAddWithOptionalArguments) {
  const at::Tensor x = random({3, 4}, ScalarType::Float), y = random({4}, ScalarType::Float);
  EXPECT_TRUE(close(tritonrt_axpy(x), x, {0, 0}));
  EXPECT_TRUE(close(tritonrt_axpy(x, y), at::add(y, x), {1.3e-6, 1e-5}));
  EXPECT_TRUE(close(tritonrt_axpy(x, y, 2.5), at::add(y, x, 2.5), {1.3e-6, 1e-5}));
  EXPECT_TRUE(close(tritonrt_axpy(x, std::nullopt, -3), at::mul(x, -3), {1.3e-6, 1e-5}));
  const at::Tensor h = random({1000, 3}, ScalarType::Half), hy = random({1000, 1}, ScalarType::Double);
  EXPECT_TRUE(close(tritonrt_axpy(h, hy, 0.25), at::add(hy, h, 0.25), tolerance(ScalarType::Double, {})));
  const at::Tensor i = random({5, 0}, ScalarType::Int);
  EXPECT_TRUE(close(tritonrt_axpy(i, std::nullopt, 2), at::mul(i, 2), {0, 0}));
  const at::Tensor l = random({7}, ScalarType::Long);
  EXPECT_TRUE(close(tritonrt_axpy(l, l, 3), at::add(l, l, 3), {0, 0}));
}

TEST_F(GpuOps, LayerNormMatchesAten) {
  const std::pair<std::vector<int64_t>, std::vector<int64_t>> cases[] = {
      {{4, 8}, {8}}, {{3, 5, 7}, {5, 7}}, {{2, 4097}, {4097}}, {{0, 8}, {8}}, {{5, 1}, {1}}, {{9, 100}, {9, 100}}};
  for (const auto& [shape, normalized] : cases) {
    for (const ScalarType type : {ScalarType::Float, ScalarType::Half, ScalarType::BFloat16, ScalarType::Double}) {
      for (const bool affine : {false, true}) {
        for (const double eps : {1e-5, 1e-3}) {
          const at::Tensor x = random(shape, type) * 2 + 0.5;
          const std::optional<at::Tensor> w = affine ? std::optional(random(normalized, type)) : std::nullopt;
          const std::optional<at::Tensor> b = affine ? std::optional(random(normalized, type)) : std::nullopt;
          SCOPED_TRACE(::testing::Message() << x.sizes() << " " << type << " affine " << affine << " eps " << eps);
          const Tolerance tol = type == ScalarType::Half       ? Tolerance{1e-2, 1e-2}
                                : type == ScalarType::BFloat16 ? Tolerance{5e-2, 5e-2}
                                                               : tolerance(type, {1e-4, 1e-4});
          EXPECT_TRUE(close(tritonrt_layer_norm(x, normalized, w, b, eps),
                            at::layer_norm(x, normalized, w, b, eps), tol));
        }
      }
    }
  }
  const at::Tensor t = random({64, 48}, ScalarType::Float).t();  // non-contiguous input
  EXPECT_TRUE(close(tritonrt_layer_norm(t, {64}, std::nullopt, std::nullopt),
                    at::layer_norm(t, {64}), {1e-4, 1e-4}));
}

TEST_F(GpuOps, MatmulMatchesAtenInFp32) {
  const std::array<int64_t, 3> sizes[] = {{1, 1, 1},     {17, 65, 33}, {128, 64, 256}, {300, 200, 129},
                                          {0, 5, 7},     {5, 0, 7},    {5, 7, 0},      {1024, 512, 768}};
  for (const ScalarType type : {ScalarType::Half, ScalarType::BFloat16}) {
    const Tolerance tol = type == ScalarType::Half ? Tolerance{1e-2, 1e-2} : Tolerance{2e-2, 2e-2};
    for (const auto& [m, k, n] : sizes) {
      for (const bool transposed : {false, true}) {
        const at::Tensor a = transposed ? random({k, m}, type).t() : random({m, k}, type);
        const at::Tensor b = transposed ? random({n, k}, type).t() : random({k, n}, type);
        SCOPED_TRACE(::testing::Message() << type << " " << m << "x" << k << " @ " << k << "x" << n
                                          << (transposed ? " transposed" : ""));
        const at::Tensor got = tritonrt_matmul(a, b);
        EXPECT_EQ(got.scalar_type(), type);
        EXPECT_TRUE(close(got.to(at::kFloat), at::matmul(a.to(at::kFloat), b.to(at::kFloat)), tol));
      }
    }
  }
}

TEST_F(GpuOps, ErrorsNameTheArgument) {
  const at::Tensor g = random({3}, ScalarType::Float);
  EXPECT_EQ(argument_error([&] { tritonrt_add(g, at::ones({3})); }),
            "tritonrt::add: argument 'other' is a CPU tensor; tritonrt launches kernels on CUDA tensors only");
  EXPECT_EQ(argument_error([&] { tritonrt_add(at::Tensor(), g); }),
            "tritonrt::add: argument 'self' is an undefined tensor; a defined CUDA tensor is required");
  EXPECT_EQ(argument_error([&] { tritonrt_add(g, at::zeros({3}, cuda(ScalarType::ComplexFloat))); }),
            "tritonrt::add: argument 'other' has dtype ComplexFloat, which Triton has no type for");
  EXPECT_NE(argument_error([&] { tritonrt_layer_norm(g, {3}, at::ones({3}), std::nullopt); })
                .find("tritonrt::layer_norm: argument 'weight' is a CPU tensor"),
            std::string::npos);
}

TEST_F(GpuOps, TensorsOnTwoDevicesAreAnError) {
  if (::torch::cuda::device_count() < 2) GTEST_SKIP() << "tensors on two GPUs need a second GPU";
  const at::Tensor g = random({3}, ScalarType::Float);
  const at::Tensor other = random({3}, ScalarType::Float).to(at::Device(at::kCUDA, 1));
  EXPECT_EQ(argument_error([&] { tritonrt_add(g, other); }),
            "tritonrt::add: argument 'other' is on cuda:1 but the tensor arguments before it are on cuda:0");
}

TEST_F(GpuOps, RunsOnTheTensorsDeviceUnderAGuard) {
  if (::torch::cuda::device_count() < 2) GTEST_SKIP() << "needs a second GPU";
  const at::Tensor x = random({1000}, ScalarType::Float).to(at::Device(at::kCUDA, 1));
  const c10::cuda::CUDAGuard current(0);
  const at::Tensor out = tritonrt_add(x, x);
  EXPECT_EQ(out.device(), x.device());
  EXPECT_TRUE(close(out, at::add(x, x), {0, 0}));
  EXPECT_EQ(c10::cuda::current_device(), 0);  // the caller's device is current again
}

// torch defers set_device to a device that has no context yet until its next stream lookup;
// the op must still allocate and launch on the tensors' device.
TEST_F(GpuOps, RunsOnTheTensorsDeviceWhileASwitchIsDeferred) {
  if (::torch::cuda::device_count() < 2) GTEST_SKIP() << "needs a second GPU";
  const at::Tensor x = random({1000}, ScalarType::Float);  // on cuda:0
  if (c10::cuda::hasPrimaryContext(1)) GTEST_SKIP() << "cuda:1 has a context already: no switch would be deferred";
  C10_CUDA_CHECK(c10::cuda::MaybeSetDevice(1));
  const at::Tensor out = tritonrt_add(x, x);
  EXPECT_EQ(out.device(), x.device());
  EXPECT_TRUE(close(out, at::add(x, x), {0, 0}));
}

TEST_F(GpuOps, DeviceScopeSwitchesOnlyWhenNeededAndRestores) {
  if (::torch::cuda::device_count() < 2) GTEST_SKIP() << "needs a second GPU";
  const c10::cuda::CUDAGuard current(0);
  {
    const torch::DeviceScope scope(1);
    EXPECT_EQ(c10::cuda::current_device(), 1);
    {
      const torch::DeviceScope same(1);
      EXPECT_EQ(c10::cuda::current_device(), 1);
    }
    EXPECT_EQ(c10::cuda::current_device(), 1);  // the inner scope changed nothing, so restores nothing
  }
  EXPECT_EQ(c10::cuda::current_device(), 0);
}

TEST_F(GpuOps, ScopedLaunchRejectsTensorsOfAnotherDevice) {
  if (::torch::cuda::device_count() < 2) GTEST_SKIP() << "needs a second GPU";
  auto& fn = JitFunction::get(kAdapterKernels, "copy_tile_kernel");
  const at::Tensor x = random({16}, ScalarType::Float).to(at::Device(at::kCUDA, 1));
  const at::Tensor out = at::empty_like(x);
  const torch::DeviceScope scope(0);
  EXPECT_EQ(argument_error([&] { torch::launch(scope, fn, {.grid = {1}}, x, out, 16, 16); }),
            "tritonrt: kernel 'copy_tile_kernel': its tensors are on cuda:1 but the DeviceScope is for cuda:0");
}

TEST_F(GpuOps, RunsOnTheCurrentStream) {
  const at::Tensor x = random({1 << 20}, ScalarType::Float);
  c10::cuda::getCurrentCUDAStream().synchronize();  // x is ready before the side stream reads it
  const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
  at::Tensor out;
  {
    const c10::cuda::CUDAStreamGuard on_side(side);
    out = tritonrt_softmax(tritonrt_add(x, x));
  }
  side.synchronize();
  EXPECT_TRUE(close(out, at::softmax(at::add(x, x), -1), {1e-5, 1e-6}));
}

// Capture records only work enqueued on the capturing stream: a launch elsewhere would fail
// the capture, so this also shows the ops launch on torch's current stream.
TEST_F(GpuOps, OpsReplayInACudaGraph) {
  at::Tensor x = random({4097}, ScalarType::Float), y = random({4097}, ScalarType::Float);
  tritonrt_sum(tritonrt_add(x, y), 0);  // compile and load outside the capture
  const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
  at::cuda::CUDAGraph graph;
  at::Tensor out;
  {
    const c10::cuda::CUDAStreamGuard on_side(side);
    graph.capture_begin();
    out = tritonrt_sum(tritonrt_add(x, y, 2), 0);
    graph.capture_end();
  }
  for (int i = 0; i < 3; ++i) {
    x.copy_(random({4097}, ScalarType::Float));
    graph.replay();
    EXPECT_TRUE(close(out, at::sum(at::add(x, y, 2), {0}), {1e-5, 1e-3}));
  }
}

// A kernel that needs global scratch takes it from torch's caching allocator, also while a
// CUDA graph is being captured.
TEST_F(GpuOps, ScratchMemoryComesFromTorchsAllocator) {
  if (at::cuda::getCurrentDeviceProperties()->major < 9) GTEST_SKIP() << "device-side tensor descriptors need sm_90";
  auto& fn = JitFunction::get(kAdapterKernels, "copy_tile_kernel");
  const at::Tensor in = random({1024}, ScalarType::Float);
  at::Tensor out = at::zeros_like(in);
  const auto allocations = [] {
    return c10::cuda::CUDACachingAllocator::getDeviceStats(0).allocation[0].allocated;  // aggregate count
  };
  const auto before = allocations();
  torch::launch(fn, {.grid = {4}}, in, out, 1024, 256);
  EXPECT_GT(allocations(), before);
  EXPECT_TRUE(close(out, in, {0, 0}));

  at::cuda::CUDAGraph graph;
  out.zero_();
  {
    const c10::cuda::CUDAStreamGuard on_side(c10::cuda::getStreamFromPool());
    graph.capture_begin();
    torch::launch(fn, {.grid = {4}}, in, out, 1024, 256);
    graph.capture_end();
  }
  graph.replay();
  EXPECT_TRUE(close(out, in, {0, 0}));
}

// The first launch imports and compiles in the embedded interpreter; later ones are cache hits.
TEST_F(GpuOps, RepeatedCallsAgree) {
  const at::Tensor x = random({777}, ScalarType::Half), y = random({777}, ScalarType::Half);
  const at::Tensor first = tritonrt_add(x, y);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(close(tritonrt_add(x, y), first, {0, 0}));
}

}  // namespace
}  // namespace tritonrt::test

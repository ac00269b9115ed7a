// The operators on a GPU: each against its aten reference on fresh random inputs, errors,
// devices, streams, CUDA graphs and scratch memory.

#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "torch_test.h"

namespace tritonrt::test {
namespace {

// --- the operators on a GPU ---------------------------------------------------------------------

TEST_F(GpuOps, AddMatchesAtenOverShapesDtypesAndAlpha) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{0}, {0}},
      {{1}, {1}},
      {{1000003}, {1000003}},
      {{17, 33}, {17, 33}},
      {{3, 1, 5}, {4, 1}},
      {{}, {7}},
      {{8, 0, 3}, {3}},
      {{2, 3, 4, 5, 6}, {5, 1}},
      {{2, 1, 2, 1, 2, 1}, {1, 2, 1, 2, 1, 2}}};  // alternating broadcasts: more dims than the strided kernel takes
  const std::pair<ScalarType, ScalarType> dtypes[] = {
      {ScalarType::Float, ScalarType::Float},       {ScalarType::Half, ScalarType::Half},
      {ScalarType::BFloat16, ScalarType::BFloat16}, {ScalarType::Double, ScalarType::Double},
      {ScalarType::Half, ScalarType::Float},        {ScalarType::Int, ScalarType::Half},
      {ScalarType::Int, ScalarType::Int},           {ScalarType::Long, ScalarType::Char},
      {ScalarType::Byte, ScalarType::Byte},         {ScalarType::Bool, ScalarType::Bool},
      {ScalarType::Bool, ScalarType::Char}};
  for (const auto& [sa, sb] : shapes) {
    for (const auto& [ta, tb] : dtypes) {
      const at::Tensor a = random(sa, ta), b = random(sb, tb);
      const ScalarType result = at::result_type(a, b);
      std::vector<c10::Scalar> alphas = {1};
      if (c10::isFloatingType(result))
        alphas = {1, -0.5, 3};
      else if (result != ScalarType::Bool)
        alphas = {1, 3, -2};
      for (const auto& alpha : alphas) {
        SCOPED_TRACE(::testing::Message()
                     << "a " << a.sizes() << " " << ta << ", b " << b.sizes() << " " << tb << ", alpha " << alpha);
        EXPECT_TRUE(close(tritonrt_add(a, b, alpha), at::add(a, b, alpha), tolerance(result, {1.3e-6, 1e-5})));
      }
    }
  }
}

TEST_F(GpuOps, AddReadsNonContiguousInputs) {
  const at::Tensor base = random({40, 66}, ScalarType::Float);
  const at::Tensor transposed = random({33, 40}, ScalarType::Float).t();  // 40 x 33, column-major
  const at::Tensor stepped = base.slice(1, 0, 66, 2);                     // 40 x 33, stride 2
  const at::Tensor expanded = random({1, 33}, ScalarType::Half).expand({40, 33});
  const at::Tensor offset = base.slice(0, 1, 40).slice(1, 3, 36);  // 39 x 33 view with an offset
  for (const auto& [a, b] : std::vector<std::pair<at::Tensor, at::Tensor>>{
           {transposed, stepped},
           {stepped, expanded},
           {expanded, transposed},
           {offset, stepped.slice(0, 0, 39)},
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
  const Case cases[] = {{{0}, 0, false},        {{5, 0}, 1, false},       {{0, 5}, 1, true},    {{1000003}, 0, false},
                        {{17, 33}, 0, false},   {{17, 33}, -1, true},     {{3, 4, 5}, 1, true}, {{}, 0, false},
                        {{64, 4097}, 1, false}, {{7, 3, 2049}, 2, false}, {{2049, 3}, 0, false}};
  const std::pair<ScalarType, std::optional<ScalarType>> dtypes[] = {
      {ScalarType::Float, std::nullopt},     {ScalarType::Half, std::nullopt},
      {ScalarType::BFloat16, std::nullopt},  {ScalarType::Double, std::nullopt},
      {ScalarType::Int, std::nullopt},       {ScalarType::Bool, std::nullopt},
      {ScalarType::Half, ScalarType::Float}, {ScalarType::Float, ScalarType::Half},
      {ScalarType::Char, ScalarType::Int}};
  for (const auto& c : cases) {
    for (const auto& [type, dtype] : dtypes) {
      const at::Tensor x = random(c.shape, type);
      SCOPED_TRACE(::testing::Message() << x.sizes() << " " << type << " dim " << c.dim << " keepdim " << c.keepdim
                                        << " dtype " << (dtype ? c10::toString(*dtype) : "None"));
      const at::Tensor want = at::sum(x, {c.dim}, c.keepdim, dtype);
      // Summed in another order, a float sum of n terms moves by about eps * sqrt(n) times
      // their size: 1.8e-4 over 1,000,003 fp32 terms once, beyond a fixed 1e-4.
      const double terms = x.dim() == 0 ? 1.0 : static_cast<double>(x.size(c.dim));
      const double atol = 1e-4 * std::max(1.0, std::sqrt(terms / 4096.0));
      EXPECT_TRUE(close(tritonrt_sum(x, c.dim, c.keepdim, dtype), want, tolerance(want.scalar_type(), {1e-5, atol})));
    }
  }
}

TEST_F(GpuOps, SumReadsNonContiguousInputs) {
  const at::Tensor inputs[] = {
      random({33, 17}, ScalarType::Float).t(), random({4, 6, 8}, ScalarType::Float).slice(1, 0, 6, 2),
      random({4, 6, 8}, ScalarType::Float).permute({1, 2, 0}), random({1, 300}, ScalarType::Half).expand({5, 300})};
  for (const auto& x : inputs) {
    for (int64_t dim = 0; dim < x.dim(); ++dim) {
      SCOPED_TRACE(::testing::Message() << x.sizes() << x.strides() << " dim " << dim);
      const at::Tensor want = at::sum(x, {dim});
      EXPECT_TRUE(close(tritonrt_sum(x, dim), want, tolerance(want.scalar_type(), {1e-5, 1e-4})));
    }
  }
}

TEST_F(GpuOps, SoftmaxMatchesAten) {
  const std::pair<std::vector<int64_t>, int64_t> cases[] = {{{0, 5}, -1},   {{1, 1}, -1},   {{7, 1000}, -1},
                                                            {{3, 5000}, 1}, {{4, 3, 5}, 1}, {{4, 3, 5}, 0},
                                                            {{2049}, 0},    {{}, 0},        {{300, 7}, -1}};
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
          EXPECT_TRUE(
              close(tritonrt_layer_norm(x, normalized, w, b, eps), at::layer_norm(x, normalized, w, b, eps), tol));
        }
      }
    }
  }
  const at::Tensor t = random({64, 48}, ScalarType::Float).t();  // non-contiguous input
  EXPECT_TRUE(close(tritonrt_layer_norm(t, {64}, std::nullopt, std::nullopt), at::layer_norm(t, {64}), {1e-4, 1e-4}));
}

TEST_F(GpuOps, MatmulMatchesAtenInFp32) {
  const std::array<int64_t, 3> sizes[] = {{1, 1, 1}, {17, 65, 33}, {128, 64, 256}, {300, 200, 129},
                                          {0, 5, 7}, {5, 0, 7},    {5, 7, 0},      {1024, 512, 768}};
  for (const ScalarType type : {ScalarType::Half, ScalarType::BFloat16}) {
    const Tolerance tol = type == ScalarType::Half ? Tolerance{1e-2, 1e-2} : Tolerance{2e-2, 2e-2};
    for (const auto& [m, k, n] : sizes) {
      for (const bool transposed : {false, true}) {
        const at::Tensor a = transposed ? random({k, m}, type).t() : random({m, k}, type);
        const at::Tensor b = transposed ? random({n, k}, type).t() : random({k, n}, type);
        SCOPED_TRACE(::testing::Message()
                     << type << " " << m << "x" << k << " @ " << k << "x" << n << (transposed ? " transposed" : ""));
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
  EXPECT_NE(argument_error([&] {
              tritonrt_layer_norm(g, {3}, at::ones({3}), std::nullopt);
            }).find("tritonrt::layer_norm: argument 'weight' is a CPU tensor"),
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

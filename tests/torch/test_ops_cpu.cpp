// The operators without a GPU, called through the dispatcher as users call them: schemas,
// Meta kernels against aten's, CPU errors, and every op kernel compiled for cuda:90.

#include "torch_test.h"

namespace tritonrt::test {
namespace {

// --- the operators without a GPU ----------------------------------------------------------------

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
  same(tritonrt_add(meta({3, 1}), meta({1, 4}, ScalarType::Half), 2),
       at::add(meta({3, 1}), meta({1, 4}, at::kHalf), 2));
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
  EXPECT_NE(argument_error([&] {
              tritonrt_add(meta({3}, ScalarType::Int), meta({3}, ScalarType::Int), 0.5);
            }).find("alpha must not be a floating point number"),
            std::string::npos);
  EXPECT_NE(argument_error([&] {
              tritonrt_add(meta({3}, ScalarType::ComplexFloat), meta({3}));
            }).find("argument 'self' has dtype ComplexFloat"),
            std::string::npos);
  EXPECT_NE(argument_error([&] { tritonrt_softmax(meta({3}, ScalarType::Long)); }).find("floating-point tensor"),
            std::string::npos);
  EXPECT_THROW(tritonrt_sum(meta({3}), 1), c10::IndexError);
  EXPECT_NE(argument_error([&] {
              tritonrt_layer_norm(meta({2, 3}), {4}, std::nullopt, std::nullopt);
            }).find("trailing dims"),
            std::string::npos);
  EXPECT_NE(argument_error([&] {
              tritonrt_matmul(meta({3, 4}, ScalarType::Half), meta({3, 4}, ScalarType::Half));
            }).find("cannot be multiplied"),
            std::string::npos);
  EXPECT_NE(argument_error([&] {
              tritonrt_matmul(meta({3, 4}), meta({4, 3}));
            }).find("takes Half or BFloat16"),
            std::string::npos);
}

TEST_F(Ops, CpuTensorsAreRejectedNamingTheArgument) {
  const at::Tensor cpu = at::ones({3});
  EXPECT_EQ(argument_error([&] { tritonrt_add(cpu, cpu); }),
            "tritonrt::add: argument 'self' is a CPU tensor; tritonrt launches kernels on CUDA tensors only");
  EXPECT_NE(argument_error([&] { tritonrt_sum(cpu, 0); }).find("tritonrt::sum: argument 'self' is a CPU tensor"),
            std::string::npos);
  EXPECT_NE(argument_error([&] { tritonrt_softmax(cpu); }).find("tritonrt::softmax: argument 'self'"),
            std::string::npos);
  EXPECT_NE(argument_error([&] { tritonrt_axpy(cpu, std::nullopt, 2); }).find("tritonrt::axpy: argument 'x'"),
            std::string::npos);
  EXPECT_NE(argument_error([&] {
              tritonrt_layer_norm(cpu, {3}, std::nullopt, std::nullopt);
            }).find("tritonrt::layer_norm: argument 'input'"),
            std::string::npos);
  EXPECT_NE(argument_error([&] {
              tritonrt_matmul(cpu.view({1, 3}), cpu.view({3, 1}));
            }).find("tritonrt::matmul: argument 'a'"),
            std::string::npos);
  // An undefined tensor next to a CPU one dispatches to CPU as well.
  EXPECT_EQ(argument_error([&] { tritonrt_add(at::Tensor(), cpu); }),
            "tritonrt::add: argument 'self' is an undefined tensor; a defined CUDA tensor is required");
}

TEST_F(Ops, CudaTensorsOnDifferentDevicesAreRejected) {
  EXPECT_EQ(argument_error([&] { tritonrt_add(fake_cuda(0), fake_cuda(1)); }),
            "tritonrt::add: argument 'other' is on cuda:1 but the tensor arguments before it are on cuda:0");
  EXPECT_NE(argument_error([&] {
              tritonrt_layer_norm(fake_cuda(1), {3}, fake_cuda(0), std::nullopt);
            }).find("argument 'weight' is on cuda:0"),
            std::string::npos);
}

// Every op kernel, in the variants the operators launch, compiles for Hopper.
TEST(OpsKernels, CompileForHopper) {
  const Target hopper = Target::parse("cuda:90");
  const auto p = [](DType t) { return DevicePtr{reinterpret_cast<const void*>(std::uintptr_t{1} << 20), t}; };
  auto& add = JitFunction::get(kOpsKernels + "/tritonrt_elementwise.py", "add_kernel");
  add.compile(hopper, {}, p(DType::fp16), p(DType::fp16), p(DType::fp16), scalar(DType::fp32, 2.0), 1000, 1024,
              DType::fp32);
  add.compile(hopper, {}, std::nullopt, p(DType::bf16), p(DType::bf16), scalar(DType::fp32, 1), 17, 1024, DType::fp32);
  add.compile(hopper, {}, p(DType::i8), p(DType::u1), p(DType::i8), scalar(DType::i64, 3), 4096, 1024, DType::i64);
  add.compile(hopper, {}, p(DType::u1), p(DType::u1), p(DType::u1), scalar(DType::i64, 1), 77, 1024, DType::i64);
  add.compile(hopper, {}, p(DType::fp64), p(DType::fp32), p(DType::fp64), scalar(DType::fp64, 0.5), 33, 1024,
              DType::fp64);
  add.compile(hopper, {}, p(DType::fp8e4nv), p(DType::fp32), p(DType::fp32), scalar(DType::fp32, 1), 32, 1024,
              DType::fp32);
  auto& strided = JitFunction::get(kOpsKernels + "/tritonrt_elementwise.py", "add_strided_kernel");
  strided.compile(hopper, {}, p(DType::fp32), p(DType::fp16), p(DType::fp32), scalar(DType::fp32, 1), 60, 3, 4, 5, 0,
                  20, 5, 1, 0, 0, 1, 0, 1024, DType::fp32);
  strided.compile(hopper, {}, std::nullopt, p(DType::i64), p(DType::i64), scalar(DType::i64, -2), 60, 3, 4, 5, 0, 0, 0,
                  0, 60, 1, 15, 3, 1024, DType::i64);

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
    const auto art = matmul.compile(hopper, matmul_options, p(t), p(t), p(t), 256, 512, 128, 128, 1, 512, 1, 512, 1,
                                    128, 128, 64, 8);
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

}  // namespace
}  // namespace tritonrt::test

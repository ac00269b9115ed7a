// The torch adapter (tritonrt/torch.h): argument traits and their parity with Triton's own
// specialization, and the tensor checks with their messages.

#include "torch_test.h"

namespace tritonrt::test {
namespace {

// --- argument traits ----------------------------------------------------------------------------

TEST(Adapter, DTypesAreTritonsNamesForTorchTypes) {
  const std::pair<ScalarType, const char*> expected[] = {{ScalarType::Bool, "u1"},
                                                         {ScalarType::Char, "i8"},
                                                         {ScalarType::Short, "i16"},
                                                         {ScalarType::Int, "i32"},
                                                         {ScalarType::Long, "i64"},
                                                         {ScalarType::Byte, "u8"},
                                                         {ScalarType::UInt16, "u16"},
                                                         {ScalarType::UInt32, "u32"},
                                                         {ScalarType::UInt64, "u64"},
                                                         {ScalarType::Half, "fp16"},
                                                         {ScalarType::BFloat16, "bf16"},
                                                         {ScalarType::Float, "fp32"},
                                                         {ScalarType::Double, "fp64"},
                                                         {ScalarType::Float8_e4m3fn, "fp8e4nv"},
                                                         {ScalarType::Float8_e5m2, "fp8e5"},
                                                         {ScalarType::Float8_e4m3fnuz, "fp8e4b8"},
                                                         {ScalarType::Float8_e5m2fnuz, "fp8e5b16"}};
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
  EXPECT_NE(
      argument_error([&] { pack_arg(a, at::zeros({2}, at::kComplexFloat)); }).find("ComplexFloat has no Triton type"),
      std::string::npos);
  EXPECT_NE(argument_error([&] { pack_arg(a, c10::Scalar(c10::complex<double>(1, 2))); }).find("complex c10::Scalar"),
            std::string::npos);
  EXPECT_NE(argument_error([&] { pack_arg(a, ScalarType::QInt8); }).find("QInt8 has no Triton type"),
            std::string::npos);
}

// The specialization of a call with torch arguments is the one Triton's JIT builds for the
// same Python values (a tensor stands in as an address with its dtype).
TEST(Adapter, SpecializationMatchesTritonsForTorchArguments) {
  auto& fn = JitFunction::get(kAdapterKernels, "arguments_kernel");
  const at::Tensor x = at::zeros({64}, at::kBFloat16);
  const auto address = std::to_string(reinterpret_cast<std::uintptr_t>(x.data_ptr()));
  const std::pair<Specialization, std::string> cases[] = {
      {fn.specialize(x, std::optional<at::Tensor>(), c10::Scalar(0.5), c10::Scalar(1), c10::Scalar(true),
                     ScalarType::Half),
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
  EXPECT_EQ(
      argument_error([&] { torch::TensorChecks("my::op").required(fake_cuda(0), "a").required(fake_cuda(1), "b"); }),
      "my::op: argument 'b' is on cuda:1 but the tensor arguments before it are on cuda:0");
  EXPECT_EQ(
      argument_error([&] { torch::TensorChecks("my::op").required(fake_cuda(0, ScalarType::ComplexFloat), "z"); }),
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
            "tritonrt: kernel 'copy_tile_kernel', parameter 'out_ptr': is a CPU tensor; tritonrt launches kernels on "
            "CUDA tensors only");
  EXPECT_EQ(argument_error([&] { torch::launch(fn, {.grid = {1}}, fake_cuda(0), fake_cuda(1), 16, 16); }),
            "tritonrt: kernel 'copy_tile_kernel', parameter 'out_ptr': is on cuda:1 but the tensor arguments before it "
            "are on cuda:0");
}

TEST(Adapter, DeviceScopeNeedsADeviceIndex) {
  EXPECT_EQ(argument_error([] { const torch::DeviceScope scope(-1); }),
            "tritonrt: DeviceScope needs a CUDA device index, got -1");
}

TEST(Adapter, HeuristicsSeeTensorsAsTorchTensors) {
  const std::string library = kKernels + "/library_style.py";
  const Target hopper = Target::parse("cuda:90");
  // The dtype compared with torch's dtypes, and its str() ("torch.float16").
  auto& square = JitFunction::get(library, "dtype_heuristic_square");
  for (const auto& [dtype, name] : {std::pair{ScalarType::Half, "float16"}, std::pair{ScalarType::Float, "float32"}}) {
    const at::Tensor x = at::empty({1000}, at::TensorOptions().dtype(dtype));
    const at::Tensor out = at::empty({1000}, at::TensorOptions().dtype(dtype));
    const std::string tensor = std::string("torch.empty(1000, dtype=torch.") + name + ")";
    EXPECT_EQ(square.compile(hopper, {}, x, out, 1000)->metadata.hash,
              triton_decorated_run(library, "dtype_heuristic_square", "[" + tensor + ", " + tensor + ", 1000]").hash)
        << name;
  }
  // Shapes and strides: a row-major tensor and a transposed one.
  auto& copy = JitFunction::get(library, "strided_copy_2d");
  const at::Tensor rows = at::empty({64, 300});
  const at::Tensor transposed = at::empty({300, 64}).t();
  const at::Tensor out = at::empty({64, 300});
  for (const auto& [x, python] : {std::pair{rows, std::string("torch.empty(64, 300)")},
                                  std::pair{transposed, std::string("torch.empty(300, 64).t()")}}) {
    EXPECT_EQ(copy.compile(hopper, {}, x, out, 64, 300, x.stride(0), x.stride(1), out.stride(0))->metadata.hash,
              triton_decorated_run(library, "strided_copy_2d",
                                   "[" + python + ", torch.empty(64, 300), 64, 300, " + std::to_string(x.stride(0)) +
                                       ", " + std::to_string(x.stride(1)) + ", 300]")
                  .hash)
        << python;
  }
}

}  // namespace
}  // namespace tritonrt::test

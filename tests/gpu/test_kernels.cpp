// Kernels launched through tritonrt on a GPU, each result checked element by element
// against a host reference computed in double: every dtype of a pointwise add, reductions,
// the i64 / constexpr-1 / None specializations, a matmul with large shared memory, clusters
// (num_ctas), device-built tensor descriptors (global scratch), programmatic dependent launch
// and a Gluon kernel.

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "gpu_test.h"
#include "host_float.h"

namespace tritonrt::test {
namespace {

using Kernels = GpuTest;

// The grid of a 1-D kernel over `n` elements with block `BLOCK`, read from the call.
Grid blocks_over_n(const BoundArgs& a) { return Grid{cdiv(a.integer("n"), a.integer("BLOCK"))}; }

constexpr std::size_t kGuard = 67;  // poisoned elements past the end that masks must protect
constexpr std::size_t kSizes[] = {1, 1000, 100003};

// ---------------------------------------------------------------------------------------------
// 1. Pointwise add over every dtype, odd sizes, masked.

// One dtype of the add test: how inputs are drawn, how the expected sum is formed and compared.
struct AddFp32 {
  using Bits = float;
  static constexpr DType dtype = DType::fp32;
  static Bits draw(Random& r) { return static_cast<float>(r.signed_magnitude(0.5, 100.0)); }
  // Exact sum in double, one rounding to fp32: what an IEEE fp32 add returns (tolerance: exact).
  static Bits sum(Bits a, Bits b) { return static_cast<float>(static_cast<double>(a) + static_cast<double>(b)); }
  static double value(Bits v) { return v; }
};
struct AddInt32 {
  using Bits = std::int32_t;
  static constexpr DType dtype = DType::i32;
  static Bits draw(Random& r) { return r.integer<std::int32_t>(-(1 << 30), 1 << 30); }
  static Bits sum(Bits a, Bits b) { return a + b; }
  static std::int64_t value(Bits v) { return v; }
};
struct AddInt64 {
  using Bits = std::int64_t;
  static constexpr DType dtype = DType::i64;
  static Bits draw(Random& r) { return r.integer<std::int64_t>(-(std::int64_t{1} << 62), std::int64_t{1} << 62); }
  static Bits sum(Bits a, Bits b) { return a + b; }
  static std::int64_t value(Bits v) { return v; }
};
// fp16 / bf16: inputs with magnitudes in [0.5, 8) so any sum is exact in fp32 and the kernel's
// result is one round-to-nearest-even of the exact sum whichever way the add is lowered
// (tolerance: exactly that one rounding).
struct AddFp16 {
  using Bits = std::uint16_t;
  static constexpr DType dtype = DType::fp16;
  static Bits draw(Random& r) { return to_fp16(r.signed_magnitude(0.5, 8.0)); }
  static Bits sum(Bits a, Bits b) { return to_fp16(from_fp16(a) + from_fp16(b)); }
  static double value(Bits v) { return from_fp16(v); }
};
struct AddBf16 {
  using Bits = std::uint16_t;
  static constexpr DType dtype = DType::bf16;
  static Bits draw(Random& r) { return to_bf16(r.signed_magnitude(0.5, 8.0)); }
  static Bits sum(Bits a, Bits b) { return to_bf16(from_bf16(a) + from_bf16(b)); }
  static double value(Bits v) { return from_bf16(v); }
};
// fp8e4nv: normal inputs with |x| in [2^-3, 120], so sums stay below the format's 448; the
// kernel adds in fp32 (exact) and rounds once (tolerance: exactly that one rounding).
struct AddFp8e4nv {
  using Bits = std::uint8_t;
  static constexpr DType dtype = DType::fp8e4nv;
  static Bits draw(Random& r) {
    const auto sign = static_cast<std::uint8_t>(r.integer<int>(0, 1) << 7);
    const auto exponent = static_cast<std::uint8_t>(r.integer<int>(4, 13) << 3);  // 2^-3 .. 2^6
    return static_cast<std::uint8_t>(sign | exponent | r.integer<int>(0, 7));
  }
  static Bits sum(Bits a, Bits b) { return to_fp8e4nv(from_fp8e4nv(a) + from_fp8e4nv(b)); }
  static double value(Bits v) { return from_fp8e4nv(v); }
};

// Typed pointers for the C++ element types tritonrt maps itself, DevicePtr for the rest.
template <class Case>
auto pointer_arg(const DeviceBuffer<typename Case::Bits>& b) {
  if constexpr (Case::dtype == DType::fp32 || Case::dtype == DType::i32 || Case::dtype == DType::i64) {
    return b.get();
  } else {
    return b.as(Case::dtype);
  }
}

template <class Case>
void check_add(Random& rng, void* stream) {
  using Bits = typename Case::Bits;
  auto& add = JitFunction::get(kGpuKernels, "add_kernel");
  const bool upcast = Case::dtype == DType::fp8e4nv;
  for (const std::size_t n : kSizes) {
    SCOPED_TRACE("dtype " + std::string(to_string(Case::dtype)) + ", n = " + std::to_string(n));
    std::vector<Bits> x(n), y(n);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = Case::draw(rng);
      y[i] = Case::draw(rng);
    }
    DeviceBuffer<Bits> dx(x), dy(y), dout(n + kGuard);
    dout.poison();
    const LaunchConfig config{.grid_fn = blocks_over_n, .stream = stream};
    add(config, pointer_arg<Case>(dx), pointer_arg<Case>(dy), pointer_arg<Case>(dout), static_cast<int>(n), 1024,
        upcast);
    GPU_CHECK(cuStreamSynchronize(static_cast<CUstream>(stream)));
    const auto out = dout.download();
    Mismatches bad("add_kernel " + std::string(to_string(Case::dtype)));
    for (std::size_t i = 0; i < n; ++i) {
      const Bits want = Case::sum(x[i], y[i]);
      // Compared as values (so -0 == +0), never as NaN: the poison reads as NaN or -1.
      if (!(Case::value(out[i]) == Case::value(want))) bad.add(i, Case::value(out[i]), Case::value(want));
    }
    for (std::size_t i = n; i < n + kGuard; ++i) {
      if (!is_poison(out[i])) bad.add_unpoisoned(i);
    }
    EXPECT_TRUE(bad.result());
  }
}

TEST_F(Kernels, AddFp32) {
  Stream s;
  check_add<AddFp32>(rng(), s.get());
}
TEST_F(Kernels, AddFp16) {
  Stream s;
  check_add<AddFp16>(rng(), s.get());
}
TEST_F(Kernels, AddBf16) {
  Stream s;
  check_add<AddBf16>(rng(), s.get());
}
TEST_F(Kernels, AddInt32) {
  Stream s;
  check_add<AddInt32>(rng(), s.get());
}
TEST_F(Kernels, AddInt64) {
  Stream s;
  check_add<AddInt64>(rng(), s.get());
}
TEST_F(Kernels, AddFp8e4nv) {
  REQUIRE_CAPABILITY(89, "fp8e4nv (float8_e4m3fn)");
  Stream s;
  check_add<AddFp8e4nv>(rng(), s.get());
}

// ---------------------------------------------------------------------------------------------
// 2. Reductions.

TEST_F(Kernels, RowSumFp32) {
  // Tolerance: 1e-5 of the row's sum of magnitudes (fp32 summation error, relative to the terms).
  const int rows = 37, cols = 1000, stride = 1024;
  std::vector<float> x(static_cast<std::size_t>(rows) * stride);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < stride; ++c) {
      // Columns past n_cols hold huge values: a sum that reads them fails loudly.
      x[r * stride + c] = c < cols ? static_cast<float>(rng().signed_magnitude(0.01, 1.0)) : 1e30f;
    }
  }
  DeviceBuffer<float> dx(x), dout(rows + kGuard);
  dout.poison();
  Stream s;
  JitFunction::get(kGpuKernels, "row_sum_kernel")({.grid = {rows}, .stream = s.get()}, dx.get(), dout.get(), cols,
                                                  stride, 1024);
  s.sync();
  const auto out = dout.download();
  Mismatches bad("row_sum_kernel");
  for (int r = 0; r < rows; ++r) {
    double sum = 0, magnitude = 0;
    for (int c = 0; c < cols; ++c) {
      sum += x[r * stride + c];
      magnitude += std::fabs(x[r * stride + c]);
    }
    if (!(std::fabs(out[r] - sum) <= 1e-5 * magnitude)) bad.add(r, out[r], sum);
  }
  for (std::size_t i = rows; i < rows + kGuard; ++i) {
    if (!is_poison(out[i])) bad.add_unpoisoned(i);
  }
  EXPECT_TRUE(bad.result());
}

TEST_F(Kernels, RowSoftmaxFp32) {
  // Tolerance: relative 1e-5 per element (tl.exp is the fast exp2 approximation).
  const int rows = 53, cols = 781, in_stride = 800, out_stride = 784;
  std::vector<float> x(static_cast<std::size_t>(rows) * in_stride);
  for (auto& v : x) v = static_cast<float>(rng().signed_magnitude(0.001, 6.0));
  DeviceBuffer<float> dx(x), dout(static_cast<std::size_t>(rows) * out_stride + kGuard);
  dout.poison();
  Stream s;
  auto& softmax = JitFunction::get(kGpuKernels, "softmax_kernel");
  softmax({.grid = {rows}, .stream = s.get()}, dout.get(), dx.get(), in_stride, out_stride, cols, 1024);
  s.sync();
  const auto out = dout.download();
  Mismatches bad("softmax_kernel");
  for (int r = 0; r < rows; ++r) {
    const float* row = &x[r * in_stride];
    double max = -INFINITY, den = 0;
    for (int c = 0; c < cols; ++c) max = std::max(max, static_cast<double>(row[c]));
    for (int c = 0; c < cols; ++c) den += std::exp(row[c] - max);
    for (int c = 0; c < out_stride; ++c) {
      const std::size_t i = static_cast<std::size_t>(r) * out_stride + c;
      if (c >= cols) {
        if (!is_poison(out[i])) bad.add_unpoisoned(i);
        continue;
      }
      const double want = std::exp(row[c] - max) / den;
      if (!(std::fabs(out[i] - want) <= 1e-5 * want)) bad.add(i, out[i], want);
    }
  }
  for (std::size_t i = static_cast<std::size_t>(rows) * out_stride; i < out.size(); ++i) {
    if (!is_poison(out[i])) bad.add_unpoisoned(i);
  }
  EXPECT_TRUE(bad.result());
}

// ---------------------------------------------------------------------------------------------
// 3. Integers: >= 2^31 (the i64 path) and == 1 (the constexpr path).

// Runs iota_kernel (out[i * stride] = base + i) and checks every element of the output.
template <class Base>
void check_iota(Base base, int stride, void* stream, const char* base_type, const char* stride_type) {
  SCOPED_TRACE("base " + std::to_string(base) + ", stride " + std::to_string(stride));
  const int n = 1000;
  DeviceBuffer<std::int64_t> out(static_cast<std::size_t>(n) * 3 + kGuard);
  out.poison();
  auto& iota = JitFunction::get(kGpuKernels, "iota_kernel");
  const LaunchConfig config{.grid_fn = blocks_over_n, .stream = stream};
  iota(config, out.get(), base, n, stride, 256);
  GPU_CHECK(cuStreamSynchronize(static_cast<CUstream>(stream)));

  const auto spec = iota.artifact_for(config, out.get(), base, n, stride, 256)->specialization;
  ASSERT_EQ(spec.params.size(), 5u) << spec.repr();
  EXPECT_EQ(spec.params[1].type, base_type) << spec.repr();
  EXPECT_EQ(spec.params[3].type, stride_type) << spec.repr();
  if (std::string(stride_type) == "constexpr") {
    EXPECT_EQ(spec.params[3].value, "1") << spec.repr();
    EXPECT_NE(spec.repr().find("('constexpr', 1)"), std::string::npos) << spec.repr();
  }

  const auto got = out.download();
  Mismatches bad("iota_kernel");
  for (std::size_t i = 0; i < got.size(); ++i) {
    const bool written = i < static_cast<std::size_t>(n) * stride && i % stride == 0;
    if (written) {
      const std::int64_t want = static_cast<std::int64_t>(base) + static_cast<std::int64_t>(i / stride);
      if (got[i] != want) bad.add(i, got[i], want);
    } else if (!is_poison(got[i])) {
      bad.add_unpoisoned(i);
    }
  }
  EXPECT_TRUE(bad.result());
}

TEST_F(Kernels, IntegerArgumentAbove32BitsIsI64) {
  Stream s;
  const std::int64_t base = (std::int64_t{1} << 33) + 12345;
  check_iota(base, 1, s.get(), "i64", "constexpr");
  check_iota(base, 3, s.get(), "i64", "i32");
  check_iota(-(std::int64_t{1} << 40) + 7, 3, s.get(), "i64", "i32");
  // The same C++ type with a small value is i32: Triton types integers by value.
  check_iota(std::int64_t{123457}, 3, s.get(), "i32", "i32");
  // An unsigned C++ type with a value that fits i64 is i64 too.
  check_iota(std::uint64_t{1} << 35, 1, s.get(), "i64", "constexpr");
}

TEST_F(Kernels, IntegerArgumentEqualToOneIsConstexpr) {
  Stream s;
  check_iota(std::int32_t{1000}, 1, s.get(), "i32", "constexpr");
  check_iota(std::int32_t{1000}, 3, s.get(), "i32", "i32");
  check_iota(std::int32_t{-5}, 1, s.get(), "i32", "constexpr");
}

// ---------------------------------------------------------------------------------------------
// 4. None arguments.

TEST_F(Kernels, NoneArgumentSkipsOptionalBias) {
  const int n = 5003;
  std::vector<float> x(n), bias(n);
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<float>(rng().signed_magnitude(0.5, 100.0));
    bias[i] = static_cast<float>(rng().signed_magnitude(0.5, 100.0));
  }
  DeviceBuffer<float> dx(x), dbias(bias), dout(n + kGuard);
  Stream s;
  auto& fn = JitFunction::get(kGpuKernels, "bias_add_kernel");
  const LaunchConfig config{.grid_fn = blocks_over_n, .stream = s.get()};

  auto check = [&](bool with_bias, const char* what) {
    SCOPED_TRACE(what);
    s.sync();
    const auto out = dout.download();
    Mismatches bad(std::string("bias_add_kernel ") + what);
    for (int i = 0; i < n; ++i) {
      const float want = with_bias ? static_cast<float>(static_cast<double>(x[i]) + bias[i]) : x[i];
      if (!(out[i] == want)) bad.add(i, out[i], want);
    }
    for (std::size_t i = n; i < out.size(); ++i) {
      if (!is_poison(out[i])) bad.add_unpoisoned(i);
    }
    EXPECT_TRUE(bad.result());
  };

  dout.poison();
  fn(config, dx.get(), std::nullopt, dout.get(), n, 512);
  check(false, "bias = std::nullopt");
  const auto none_spec = fn.artifact_for(config, dx.get(), std::nullopt, dout.get(), n, 512)->specialization;
  EXPECT_EQ(none_spec.params[1].type, "constexpr") << none_spec.repr();
  EXPECT_EQ(none_spec.params[1].value, "None") << none_spec.repr();

  dout.poison();
  fn(config, dx.get(), dbias.get(), dout.get(), n, 512);
  check(true, "bias = pointer");
  const auto ptr_spec = fn.artifact_for(config, dx.get(), dbias.get(), dout.get(), n, 512)->specialization;
  EXPECT_EQ(ptr_spec.params[1].type, "*fp32") << ptr_spec.repr();

  dout.poison();
  fn(config, dx.get(), std::optional<float*>{}, dout.get(), n, 512);
  check(false, "bias = empty std::optional<float*>");

  dout.poison();
  fn(config, dx.get(), std::optional<float*>{dbias.get()}, dout.get(), n, 512);
  check(true, "bias = std::optional<float*> holding a pointer");
}

// ---------------------------------------------------------------------------------------------
// 5. Matmul: fp16 inputs, fp32 accumulation, more than 48 KiB of shared memory.

TEST_F(Kernels, MatmulFp16WithLargeSharedMemory) {
  // Tolerance: relative L2 error of the whole product below 1e-2 against a double reference.
  const int M = 257, N = 376, K = 208;  // none a multiple of its block: every mask is exercised
  std::vector<std::uint16_t> a(static_cast<std::size_t>(M) * K), b(static_cast<std::size_t>(K) * N);
  for (auto& v : a) v = to_fp16(rng().signed_magnitude(0.01, 1.0));
  for (auto& v : b) v = to_fp16(rng().signed_magnitude(0.01, 1.0));
  DeviceBuffer<std::uint16_t> da(a), db(b);
  DeviceBuffer<float> dc(static_cast<std::size_t>(M) * N + kGuard);
  dc.poison();
  Stream s;
  auto& matmul = JitFunction::get(kGpuKernels, "matmul_kernel");
  const LaunchConfig config{
      .grid = {cdiv(M, 128), cdiv(N, 128)}, .stream = s.get(), .options = {.num_warps = 4, .num_stages = 3}};
  const DevicePtr pa = da.as(DType::fp16), pb = db.as(DType::fp16);
  // Strides (K, 1), (N, 1), (N, 1): the unit ones become constexpr 1, as in Triton.
  matmul(config, pa, pb, dc.get(), M, N, K, K, 1, N, 1, N, 1, 128, 128, 64);
  s.sync();

  const auto artifact = matmul.artifact_for(config, pa, pb, dc.get(), M, N, K, K, 1, N, 1, N, 1, 128, 128, 64);
  EXPECT_GT(artifact->metadata.shared, 49152) << "the test needs a kernel above the 48 KiB opt-in limit";
  EXPECT_EQ(artifact->metadata.num_stages, 3);
  EXPECT_EQ(artifact->metadata.num_warps, 4);

  EXPECT_TRUE(matches_product(
      "matmul_kernel", dc.download(), M, N, K, [&](int i, int k) { return from_fp16(a[i * K + k]); },
      [&](int k, int j) { return from_fp16(b[k * N + j]); }, [](float v) { return static_cast<double>(v); }));
}

// ---------------------------------------------------------------------------------------------
// 6. Clusters: num_ctas = 2.

TEST_F(Kernels, TwoCtasPerCluster) {
  REQUIRE_CAPABILITY(90, "num_ctas > 1 (thread block clusters)");
  const int n = 100003;  // 49 programs of 2048: an odd count of 2-CTA clusters
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<float>(rng().signed_magnitude(0.5, 100.0));
    y[i] = static_cast<float>(rng().signed_magnitude(0.5, 100.0));
  }
  DeviceBuffer<float> dx(x), dy(y), dout(n + kGuard);
  dout.poison();
  Stream s;
  auto& add = JitFunction::get(kGpuKernels, "add_kernel");
  const LaunchConfig config{.grid_fn = blocks_over_n, .stream = s.get(), .options = {.num_ctas = 2}};
  add(config, dx.get(), dy.get(), dout.get(), n, 2048, false);
  s.sync();
  const auto artifact = add.artifact_for(config, dx.get(), dy.get(), dout.get(), n, 2048, false);
  EXPECT_EQ(artifact->metadata.num_ctas, 2);
  const auto out = dout.download();
  Mismatches bad("add_kernel with num_ctas=2");
  for (int i = 0; i < n; ++i) {
    const float want = static_cast<float>(static_cast<double>(x[i]) + y[i]);
    if (!(out[i] == want)) bad.add(i, out[i], want);
  }
  for (std::size_t i = n; i < out.size(); ++i) {
    if (!is_poison(out[i])) bad.add_unpoisoned(i);
  }
  EXPECT_TRUE(bad.result());
}

// ---------------------------------------------------------------------------------------------
// 7. Global scratch: tensor descriptors built on the device.

TEST_F(Kernels, DeviceTensorDescriptorUsesGlobalScratch) {
  REQUIRE_CAPABILITY(90, "device-side tensor descriptors (TMA)");
  const int M = 100, N = 196;  // a row is 784 bytes: a multiple of 16, as TMA requires; 32x32 blocks
  std::vector<float> x(static_cast<std::size_t>(M) * N);
  for (auto& v : x) v = static_cast<float>(rng().signed_magnitude(0.5, 100.0));
  const float scale = static_cast<float>(rng().signed_magnitude(0.5, 4.0));
  DeviceBuffer<float> dx(x), dout(x.size() + kGuard);
  dout.poison();
  Stream s;
  auto& fn = JitFunction::get(kGpuKernels, "tma_scale_kernel");
  const LaunchConfig config{.grid = {cdiv(M, 32), cdiv(N, 32)}, .stream = s.get()};
  fn(config, dx.get(), dout.get(), M, N, scale, 32, 32);
  s.sync();
  const auto artifact = fn.artifact_for(config, dx.get(), dout.get(), M, N, scale, 32, 32);
  EXPECT_GT(artifact->metadata.global_scratch_size, 0);
  const auto out = dout.download();
  Mismatches bad("tma_scale_kernel");
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float want = static_cast<float>(static_cast<double>(x[i]) * scale);
    if (!(out[i] == want)) bad.add(i, out[i], want);
  }
  for (std::size_t i = x.size(); i < out.size(); ++i) {
    if (!is_poison(out[i])) bad.add_unpoisoned(i);
  }
  EXPECT_TRUE(bad.result());
}

// ---------------------------------------------------------------------------------------------
// 8. Programmatic dependent launch.

TEST_F(Kernels, ProgrammaticDependentLaunchChain) {
  REQUIRE_CAPABILITY(90, "programmatic dependent launch (griddepcontrol)");
  const int n = 100003, rounds = 8;
  std::vector<float> x(n);
  for (auto& v : x) v = static_cast<float>(rng().signed_magnitude(0.5, 1.0));
  DeviceBuffer<float> a(x), b(n + kGuard);
  b.poison();
  Stream s;
  auto& producer = JitFunction::get(kGpuKernels, "pdl_producer_kernel");
  auto& consumer = JitFunction::get(kGpuKernels, "pdl_consumer_kernel");
  const LaunchConfig config{.grid_fn = blocks_over_n, .stream = s.get(), .options = {.launch_pdl = true}};
  // Each kernel may start before the previous one ends; gdc_wait keeps the chain correct.
  for (int r = 0; r < rounds; ++r) {
    producer(config, a.get(), b.get(), n, 1024);  // b = a + 1
    consumer(config, b.get(), a.get(), n, 1024);  // a = 2 * b
  }
  s.sync();
  EXPECT_TRUE(producer.artifact_for(config, a.get(), b.get(), n, 1024)->metadata.launch_pdl);
  EXPECT_TRUE(consumer.artifact_for(config, b.get(), a.get(), n, 1024)->metadata.launch_pdl);

  const auto got_a = a.download();
  const auto got_b = b.download();
  Mismatches bad("pdl chain");
  for (int i = 0; i < n; ++i) {
    float va = x[i], vb = 0;
    for (int r = 0; r < rounds; ++r) {
      vb = va + 1.0f;  // fp32 arithmetic, as the kernels do it
      va = vb * 2.0f;
    }
    if (!(got_a[i] == va)) bad.add(i, got_a[i], va);
    if (!(got_b[i] == vb)) bad.add(i, got_b[i], vb);
  }
  for (std::size_t i = n; i < got_b.size(); ++i) {
    if (!is_poison(got_b[i])) bad.add_unpoisoned(i);
  }
  EXPECT_TRUE(bad.result());
}

// ---------------------------------------------------------------------------------------------
// 9. A Gluon kernel (layouts by hand), launched as any other.

TEST_F(Kernels, GluonKernel) {
  const int n = 100003;
  std::vector<float> x(n);
  for (auto& v : x) v = static_cast<float>(rng().signed_magnitude(0.5, 100.0));
  DeviceBuffer<float> dx(x), dout(n + kGuard);
  dout.poison();
  Stream s;
  auto& fn = JitFunction::get(std::string(TRITONRT_TEST_KERNELS) + "/gluon_kernels.py", "gluon_scale");
  const LaunchConfig config{.grid_fn = blocks_over_n, .stream = s.get()};
  fn(config, dx.get(), dout.get(), n, 0.5f, 512);
  s.sync();
  const auto out = dout.download();
  Mismatches bad("gluon_scale");
  for (int i = 0; i < n; ++i) {
    const float want = x[i] * 0.5f;  // exact: a power of two
    if (!(out[i] == want)) bad.add(i, out[i], want);
  }
  for (std::size_t i = n; i < out.size(); ++i) {
    if (!is_poison(out[i])) bad.add_unpoisoned(i);
  }
  EXPECT_TRUE(bad.result());
}

}  // namespace
}  // namespace tritonrt::test

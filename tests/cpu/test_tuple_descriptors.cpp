// Tensor descriptors inside tuple arguments, launched on the stand-in driver: each launch's
// parameter bytes against what Triton's own launcher passes for the same call (its
// expand_signature and descriptor expansion, run by tests/python/triton_reference.py's
// launch_parameters), on a target with TMA (cuda:90) and, as FakeDriverLaunchWithoutTma, on
// one without (cuda:80). Where the installed Triton's launcher cannot launch such a kernel
// (3.6), tritonrt says so and launches nothing. Specialization and hash: test_tuples.cpp.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fake_cuda.h"
#include "fake_launch.h"
#include "reference.h"
#include "tritonrt/tritonrt.h"

namespace tritonrt::test {
namespace {

namespace py = pybind11;

const std::string kTuples = std::string(TRITONRT_TEST_KERNELS) + "/tuple_kernels.py";

// 64 x 128 fp16 matrices; the descriptors' bases are these host arrays, never read.
alignas(16) std::uint16_t g_first[64 * 128];
alignas(16) std::uint16_t g_second[64 * 128];
alignas(16) std::uint16_t g_third[64 * 128];

TensorDescriptor matrix(const std::uint16_t* base, std::int64_t block_m,
                        TensorDescriptor::Padding padding = TensorDescriptor::Padding::zero) {
  const std::int64_t shape[] = {64, 128}, strides[] = {128, 1}, block[] = {block_m, 64};
  return TensorDescriptor::make(base, DType::fp16, shape, strides, block, padding);
}

// The same descriptor as Triton's, for the reference's Python arguments (NaN padding set
// after construction: Triton's check for it asks a torch dtype, which the stand-in has not).
std::string python_matrix(const std::uint16_t* base, std::int64_t block_m, bool nan = false) {
  const std::string made = "TensorDescriptor(P(" + std::to_string(reinterpret_cast<std::uintptr_t>(base)) +
                           ", 'float16'), [64, 128], [128, 1], [" + std::to_string(block_m) + ", 64])";
  return nan ? "(lambda d: setattr(d, 'padding', 'nan') or d)(" + made + ")" : made;
}

class TupleDescriptors : public FakeDriverLaunch {
 protected:
  // Whether the installed Triton's launcher takes descriptors inside tuples (3.9; not 3.6).
  static bool triton_launches_them() {
    const ReferenceGil gil;
    return !reference_module().attr("launch_parameters")(py::make_tuple(), py::list(), py::make_tuple()).is_none();
  }

  // The last launch's parameters against those Triton's launcher passes for `args` (the call
  // as a Python expression) to `artifact`'s kernel; then the two scratch pointers, null.
  void expect_tritons_parameters(const Artifact& artifact, const std::string& args) {
    const FakeCudaLaunch launch = last_launch();
    ASSERT_GE(launch.param_count, 2u);
    const ReferenceGil gil;
    const py::object literal = py::module_::import("ast").attr("literal_eval");
    py::list types;
    for (const ParamSpec& p : artifact.specialization.params) {
      types.append(p.is_tuple() ? literal(p.type) : py::str(p.type));
    }
    const py::object meta = py::module_::import("json").attr("loads")(artifact.metadata.json)["tensordesc_meta"];
    const py::object expected = reference_module().attr("launch_parameters")(types, meta, python_args(args));
    py::list given;
    for (unsigned i = 0; i + 2 < launch.param_count; ++i) {
      given.append(py::bytes(reinterpret_cast<const char*>(fake_cuda_param(&launch, i)), launch.param_size[i]));
    }
    for (const std::string& wrong :
         reference_module().attr("parameter_mismatches")(expected, given).cast<std::vector<std::string>>()) {
      ADD_FAILURE() << wrong;
    }
    EXPECT_EQ(param<std::uint64_t>(launch, launch.param_count - 2), 0u);  // no global scratch
    EXPECT_EQ(param<std::uint64_t>(launch, launch.param_count - 1), 0u);  // no profile scratch
  }

  // A launch Triton's launcher cannot make: an ArgumentError saying so, and nothing launched.
  template <class F>
  void expect_refused(F&& launch) {
    const std::string message = argument_error(launch);
    EXPECT_NE(message.find("holds a tensor descriptor inside a tuple, which Triton " + triton_version() +
                           "'s launcher cannot launch"),
              std::string::npos)
        << message;
    EXPECT_EQ(stats().launches, 0u);
  }
};

// A (descriptor, integer) tuple beside a descriptor parameter: the tuple's descriptor is
// expanded where Triton's launcher expands it, and its block shape is part of the key.
TEST_F(TupleDescriptors, ADescriptorInATupleLaunchesAsTritonsLauncher) {
  auto& fn = JitFunction::get(kTuples, "tuple_descriptor_scale");
  const auto in = matrix(g_first, 32, TensorDescriptor::Padding::nan);
  const auto out = matrix(g_second, 32);
  const auto call = [&](const TensorDescriptor& src, int factor) {
    fn(grid(2, 2), std::make_tuple(src, factor), out, 32, 64);
  };
  if (!triton_launches_them()) return expect_refused([&] { call(in, 3); });
  const auto artifact = fn.artifact_for(grid(2, 2), std::make_tuple(in, 3), out, 32, 64);
  EXPECT_EQ(artifact->metadata.tensordesc_meta.size(), Target::current().arch == "90" ? 2u : 0u);
  call(in, 3);
  ASSERT_EQ(stats().launches, 1u);
  expect_tritons_parameters(
      *artifact, "[(" + python_matrix(g_first, 32, true) + ", 3), " + python_matrix(g_second, 32) + ", 32, 64]");
  const auto loads = stats().module_loads;
  const std::uint64_t maps = stats().tensor_maps_encoded;
  // Other memory and another factor, the same block shape: the same kernel, Triton's parameters.
  call(matrix(g_third, 32), 5);
  EXPECT_EQ(stats().module_loads, loads);
  expect_tritons_parameters(*artifact,
                            "[(" + python_matrix(g_third, 32) + ", 5), " + python_matrix(g_second, 32) + ", 32, 64]");
  EXPECT_EQ(stats().tensor_maps_encoded, maps == 0 ? 0u : maps + 1) << "one new map; the other one reused";
  // Another block shape in the tuple is another specialization, so another kernel.
  const auto narrow = fn.artifact_for(grid(2, 2), std::make_tuple(matrix(g_first, 16), 3), out, 32, 64);
  EXPECT_NE(narrow->metadata.hash, artifact->metadata.hash);
  call(matrix(g_first, 16), 3);
  EXPECT_EQ(stats().module_loads, loads + 1);
  expect_tritons_parameters(*narrow,
                            "[(" + python_matrix(g_first, 16) + ", 3), " + python_matrix(g_second, 32) + ", 32, 64]");
  // And back: the first kernel, still loaded, also for the factor passed unsigned (its code is
  // the same; only the descriptors inside are compared beyond the codes).
  call(in, 3);
  fn(grid(2, 2), std::make_tuple(in, 3u), out, 32, 64);
  EXPECT_EQ(stats().module_loads, loads + 1);
  expect_tritons_parameters(
      *artifact, "[(" + python_matrix(g_first, 32, true) + ", 3), " + python_matrix(g_second, 32) + ", 32, 64]");
}

// Two descriptors in one tuple, (out, (factor, in)), one of them nested, and a runtime value
// after the tuple.
TEST_F(TupleDescriptors, TwoDescriptorsInNestedTuplesLaunchAsTritonsLauncher) {
  auto& fn = JitFunction::get(kTuples, "tuple_descriptors_nested");
  const auto out = matrix(g_first, 32);
  const auto in = matrix(g_second, 32, TensorDescriptor::Padding::nan);
  const auto descs = std::make_tuple(out, std::make_pair(2.5, in));
  if (!triton_launches_them()) return expect_refused([&] { fn(grid(2, 2), descs, 48, 32, 64); });
  const auto artifact = fn.artifact_for(grid(2, 2), descs, 48, 32, 64);
  fn(grid(2, 2), descs, 48, 32, 64);
  ASSERT_EQ(stats().launches, 1u);
  expect_tritons_parameters(*artifact, "[(" + python_matrix(g_first, 32) + ", (2.5, " +
                                           python_matrix(g_second, 32, true) + ")), 48, 32, 64]");
  // The nested descriptor's block shape is key too.
  const auto loads = stats().module_loads;
  const auto other = std::make_tuple(out, std::make_pair(2.5, matrix(g_second, 16)));
  fn(grid(2, 2), other, 48, 32, 64);
  EXPECT_EQ(stats().module_loads, loads + 1);
  expect_tritons_parameters(
      *fn.artifact_for(grid(2, 2), other, 48, 32, 64),
      "[(" + python_matrix(g_first, 32) + ", (2.5, " + python_matrix(g_second, 16) + ")), 48, 32, 64]");
}

// A config's pre_hook is shown the tuple with Triton's descriptors in it; one that sets the
// block shape of a descriptor inside a tuple is an error, never a launch with the block shape it
// replaced (tritonrt applies a hook's block shapes to descriptor parameters only).
TEST_F(TupleDescriptors, AConfigPreHookReshapingADescriptorInsideATupleIsAnError) {
  auto& fn = JitFunction::get(kTuples, "tuple_descriptor_hooked");
  try {
    fn(grid(2, 2), std::make_tuple(matrix(g_first, 8), 3), matrix(g_second, 32));
    ADD_FAILURE() << "the hook's block shape was dropped or applied";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the hook set the block_shape of a tensor descriptor inside tuple 'src'; "
                                         "tritonrt applies a hook's block shapes to descriptor parameters only"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(stats().launches, 0u);
}

}  // namespace
}  // namespace tritonrt::test

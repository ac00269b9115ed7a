// Decorated kernels as their libraries write them (tests/kernels/library_style.py): the
// decorator chain as recorded, heuristics' values and the kernels they lead to, memoization,
// pruning and each autotune config's kernel, all checked against Triton's own run of the same
// decorated object (tests/python/triton_reference.py). Tuning itself: test_tuning.cpp.

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "function/param_names.h"
#include "reference.h"

namespace tritonrt::test {
namespace {

namespace py = pybind11;

const std::string kLibrary = kKernels + "/library_style.py";
const std::string kCases = kKernels + "/decorator_cases.py";
float* fptr(std::uintptr_t a) { return reinterpret_cast<float*>(a); }
DevicePtr half_ptr(std::uintptr_t a) { return DevicePtr{reinterpret_cast<const void*>(a), DType::fp16}; }

using Kind = Decorator::Kind;

// "LibEntry:wrapper Autotuner:autotune(3; n)" for a kernel's decorators, outermost first.
std::string chain(const JitFunction& fn) {
  std::string text;
  for (const auto& d : fn.signature().decorators) {
    text += (text.empty() ? "" : " ") + d.type + ":";
    text += d.kind == Kind::autotune     ? "autotune(" + std::to_string(d.configs) + ";"
            : d.kind == Kind::heuristics ? "heuristics("
                                         : "wrapper";
    for (const auto& name : d.names) text += " " + name;
    if (d.kind != Kind::wrapper) text += ")";
  }
  return text;
}

// A grid function's and a hook's a.integer("BLOCK_M") go through the kernel's name index:
// names alike in length and in their first and last bytes, short and long ones, all found
// where the scan of the signature finds them; a name the kernel lacks is an ArgumentError.
TEST(Decorators, BoundArgsFindEachParameterThroughTheNameIndex) {
  KernelSignature sig;
  sig.name = "k";
  const std::vector<std::string> all = {"a",         "b",         "ab",      "ba",      "x_ptr",    "y_ptr",
                                        "stride_am", "stride_ak", "stride_bk", "BLOCK_M", "BLOCK_N", "BLOCK_K",
                                        "a_desc",    "b_desc",    "c_desc",    "abcdefgh", "abcdefgXh",
                                        "a_rather_long_parameter_name", "a_rather_long_parameter_nime", ""};
  for (const auto& name : all) sig.params.push_back(ParamInfo{.name = name});
  std::vector<Arg> values;
  for (std::size_t i = 0; i < sig.params.size(); ++i) values.push_back(make_arg(static_cast<std::int64_t>(i * 7)));
  const detail::ParamNames names(sig);
  const BoundArgs indexed(sig, values, &names), scanned(sig, values);
  for (std::size_t i = 0; i < sig.params.size(); ++i) {
    const std::string& name = sig.params[i].name;
    EXPECT_EQ(names.find(name), i) << name;
    EXPECT_EQ(&indexed[name], &values[i]) << name;
    EXPECT_EQ(indexed.integer(name), scanned.integer(name)) << name;
  }
  for (const char* missing : {"c", "BLOCK_X", "stride_an", "abcdefgYh", "a_rather_long_parameter_nome", "BLOCK_M "}) {
    EXPECT_EQ(names.find(missing), detail::ParamNames::npos) << missing;
    try {
      (void)indexed.integer(missing);
      ADD_FAILURE() << missing << " was found";
    } catch (const ArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find("has no parameter '" + std::string(missing) + "'"), std::string::npos);
    }
  }
  // Fewer values than parameters (a BoundArgs over a prefix): a later name is not read past them.
  const BoundArgs prefix(sig, std::span<const Arg>(values.data(), 3), &names);
  EXPECT_EQ(prefix.integer("ab"), 14);
  EXPECT_THROW((void)prefix["BLOCK_M"], ArgumentError);
  // A config hook's BlockShapes finds its descriptors alike, with the index and without.
  BlockShapes indexed_shapes(sig, &names), scanned_shapes(sig);
  for (const char* desc : {"c_desc", "a_desc", "b_desc"}) {
    indexed_shapes.set(desc, {64, 32});
    scanned_shapes.set(desc, {64, 32});
  }
  EXPECT_EQ(indexed_shapes.changes(), scanned_shapes.changes());
  ASSERT_EQ(indexed_shapes.changes().size(), 3U);
  EXPECT_EQ(indexed_shapes.changes()[0].first, 14U);
  for (BlockShapes* shapes : {&indexed_shapes, &scanned_shapes}) {
    try {
      shapes->set("d_desc", {64, 32});
      ADD_FAILURE() << "d_desc was found";
    } catch (const ArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find("has no parameter 'd_desc' for a config hook"), std::string::npos);
    }
  }
}

TEST(Decorators, ChainsAreRecordedOutermostFirst) {
  const std::pair<const char*, const char*> cases[] = {
      {"entry_autotuned_add", "LibEntry:wrapper Autotuner:autotune(3; n)"},
      {"entry_libtuner_axpby", "LibEntry:wrapper SizePrunedTuner:autotune(3; n)"},
      {"entry_heuristic_scale", "LibEntry:wrapper Heuristics:heuristics( BLOCK EVEN)"},
      {"tuned_then_heuristic_copy", "Autotuner:autotune(3; n) Heuristics:heuristics( EVEN_N)"},
      {"heuristic_over_tuned_fill", "Heuristics:heuristics( HAS_BIAS) Autotuner:autotune(2; n)"},
      {"stacked_heuristics_sum", "Heuristics:heuristics( BLOCK) Heuristics:heuristics( NEEDS_MASK)"},
      {"entry_tuned_heuristic_rowsum",
       "LibEntry:wrapper Autotuner:autotune(3; M N) Heuristics:heuristics( TILE_N ONE_TILE)"},
  };
  for (const auto& [name, expected] : cases) EXPECT_EQ(chain(JitFunction::get(kLibrary, name)), expected) << name;
  // The call passes the parameters no decorator sets, in order.
  const auto& params = JitFunction::get(kLibrary, "entry_tuned_heuristic_rowsum").signature().params;
  std::string set;
  for (const auto& p : params) set += p.set_by_decorator ? p.name + " " : "";
  EXPECT_EQ(set, "TILE_M TILE_N ONE_TILE ");
}

TEST(Decorators, AWrapperWithoutFnIsASourceErrorNamingItsType) {
  try {
    JitFunction::get(kLibrary, "opaque_scale");
    FAIL() << "no error";
  } catch (const SourceError& e) {
    EXPECT_NE(std::string(e.what()).find("is a OpaqueLauncher: neither a @triton.jit function nor a wrapper holding "
                                         "one in .fn"),
              std::string::npos)
        << e.what();
  }
}

TEST(Decorators, HeuristicsLeadToTritonsKernel) {
  const Target hopper = Target::parse("cuda:90");
  auto& scale = JitFunction::get(kLibrary, "entry_heuristic_scale");
  for (const int n : {1000, 4096, 1 << 22}) {
    const auto artifact = scale.compile(hopper, {}, fptr(16), fptr(32), n, 0.5);
    EXPECT_EQ(artifact->metadata.hash,
              triton_decorated_run(kLibrary, "entry_heuristic_scale",
                                   "[P(16,'float32'), P(32,'float32'), " + std::to_string(n) + ", 0.5]")
                  .hash)
        << "n = " << n;
  }
  auto& summed = JitFunction::get(kLibrary, "stacked_heuristics_sum");
  for (const int n : {100, 5000}) {
    EXPECT_EQ(summed.compile(hopper, {}, fptr(16), fptr(32), n)->metadata.hash,
              triton_decorated_run(kLibrary, "stacked_heuristics_sum",
                                   "[P(16,'float32'), P(32,'float32'), " + std::to_string(n) + "]")
                  .hash)
        << "n = " << n;
  }
  // A heuristic named num_warps sets the compile option, as JITFunction.run takes it.
  auto& softmax = JitFunction::get(kLibrary, "chained_heuristics_softmax");
  for (const auto& [cols, warps] : {std::pair{100, 4}, std::pair{5000, 16}}) {
    const auto artifact = softmax.compile(hopper, {}, fptr(16), fptr(32), 64, 64, cols);
    EXPECT_EQ(artifact->metadata.num_warps, warps);
    EXPECT_EQ(artifact->metadata.hash,
              triton_decorated_run(kLibrary, "chained_heuristics_softmax",
                                   "[P(16,'float32'), P(32,'float32'), 64, 64, " + std::to_string(cols) + "]")
                  .hash);
  }
  EXPECT_NE(softmax.specialize(fptr(16), fptr(32), 64, 64, 5000).repr().find("('constexpr', 8192)"), std::string::npos);
}

std::map<std::string, int> heuristic_calls() {
  const ReferenceGil gil;
  return py::module_::import("builtins").attr("tritonrt_heuristic_calls").cast<std::map<std::string, int>>();
}

TEST(Decorators, AHeuristicRunsOncePerDistinctInputItReads) {
  auto& fn = JitFunction::get(kCases, "counted");
  const auto before = heuristic_calls();
  auto calls = [&](const char* name) {
    const auto now = heuristic_calls();
    return (now.count(name) ? now.at(name) : 0) - (before.count(name) ? before.at(name) : 0);
  };
  for (int i = 0; i < 3; ++i) (void)fn.specialize(fptr(16), 100);
  EXPECT_EQ(calls("BLOCK"), 1);        // reads n
  EXPECT_EQ(calls("WIDE"), 1);         // reads the pointer's dtype
  EXPECT_EQ(calls("COUNT"), 3);        // reads every argument: never memoized
  (void)fn.specialize(fptr(48), 100);  // another address: nothing either heuristic read changed
  EXPECT_EQ(calls("BLOCK"), 1);
  EXPECT_EQ(calls("WIDE"), 1);
  (void)fn.specialize(half_ptr(16), 100);  // another dtype: WIDE only
  EXPECT_EQ(calls("BLOCK"), 1);
  EXPECT_EQ(calls("WIDE"), 2);
  const auto spec = fn.specialize(fptr(16), 5000);  // another n: BLOCK only
  EXPECT_EQ(calls("BLOCK"), 2);
  EXPECT_EQ(calls("WIDE"), 2);
  EXPECT_EQ(spec.repr(), "[('*fp32', 'D'), ('i32', ''), ('constexpr', 1024), ('constexpr', True), ('constexpr', 4)]");
  EXPECT_EQ(fn.specialize(half_ptr(16), 100).repr(),
            "[('*fp16', 'D'), ('i32', ''), ('constexpr', 128), ('constexpr', False), ('constexpr', 4)]");
}

// A heuristic seen with many inputs (its memo grown past several tables) still runs once per
// input and answers each from memory with its own value: inputs whose integers differ only in
// high bits (multiples of 4096), in their order or in one of two values, each find theirs.
TEST(Decorators, AHeuristicOfManyInputsAnswersEachFromMemory) {
  auto& fn = JitFunction::get(kCases, "many_inputs");
  const auto before = heuristic_calls();
  auto calls = [&] { return heuristic_calls()["MANY"] - (before.count("MANY") ? before.at("MANY") : 0); };
  std::vector<std::pair<std::int64_t, std::int64_t>> inputs;
  for (std::int64_t i = 1; i <= 150; ++i) {
    inputs.emplace_back(i * 4096, 7);
    inputs.emplace_back(7, i * 4096);
    inputs.emplace_back(i, i % 5);
  }
  auto block = [&](std::int64_t n, std::int64_t m) {
    const std::string repr = fn.specialize(fptr(16), n, m).repr();
    return repr.substr(repr.rfind("('constexpr', ") + 14);
  };
  for (const auto& [n, m] : inputs) ASSERT_EQ(block(n, m), (n + m) % 3 ? "64)]" : "128)]") << n << ", " << m;
  EXPECT_EQ(calls(), static_cast<int>(inputs.size()));
  for (auto it = inputs.rbegin(); it != inputs.rend(); ++it) {
    ASSERT_EQ(block(it->first, it->second), (it->first + it->second) % 3 ? "64)]" : "128)]");
  }
  EXPECT_EQ(calls(), static_cast<int>(inputs.size()));  // none ran again
}

TEST(Decorators, ACppHeuristicReplacesThePythonOne) {
  auto& fn = JitFunction::get(kCases, "overridden");
  fn.set_heuristic("BLOCK", [](const BoundArgs& a) { return make_arg(a.integer("n") > 1000 ? 256 : 32); });
  EXPECT_EQ(fn.specialize(fptr(16), 100).repr(), "[('*fp32', 'D'), ('i32', ''), ('constexpr', 32)]");
  EXPECT_EQ(fn.specialize(fptr(16), 5000).repr(), "[('*fp32', 'D'), ('i32', ''), ('constexpr', 256)]");
  EXPECT_EQ(heuristic_calls().count("OVERRIDDEN"), 0u);
  EXPECT_THROW(fn.set_heuristic("NOPE", [](const BoundArgs&) { return make_arg(1); }), ArgumentError);
}

// Under an autotuner, each config's trial applies the heuristics below it: a C++ one set in
// place of the Python one serves them too.
TEST(Decorators, ACppHeuristicServesTheConfigsOfATunerAboveIt) {
  auto& fn = JitFunction::get(kCases, "tuned_overridden");
  fn.set_heuristic("BLOCK", [](const BoundArgs&) { return make_arg(32); });
  const auto configs = fn.compile_configs(Target::parse("cuda:90"), {}, fptr(16), 100);
  ASSERT_EQ(configs.size(), 2u);
  for (const auto& c : configs) {
    ASSERT_TRUE(c.artifact) << c.error;
    EXPECT_EQ(c.artifact->specialization.params.at(2).value, "32") << c.config;
  }
  EXPECT_EQ(heuristic_calls().count("TUNED_OVERRIDDEN"), 0u);
}

TEST(Decorators, AHeuristicThatRaisesIsAPythonErrorNamingIt) {
  try {
    (void)JitFunction::get(kCases, "failing_heuristic").specialize(fptr(16), 100);
    FAIL() << "no error";
  } catch (const PythonError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "kernel 'failing_heuristic': heuristic 'BLOCK' raised: KeyError: 'no_such_argument'"),
              std::string::npos)
        << e.what();
  }
}

TEST(Decorators, PruningKeepsTheConfigsTritonKeeps) {
  for (const auto& [name, n] : {std::pair{"pruned_axpy", 100}, std::pair{"pruned_axpy", 100000},
                                std::pair{"entry_libtuner_axpby", 300}, std::pair{"entry_libtuner_axpby", 100000}}) {
    auto& fn = JitFunction::get(kLibrary, name);
    const bool axpy = std::string(name) == "pruned_axpy";
    const auto configs =
        axpy ? fn.compile_configs(Target::parse("cuda:90"), {}, fptr(16), fptr(32), n, 2.0)
             : fn.compile_configs(Target::parse("cuda:90"), {}, fptr(16), fptr(32), fptr(48), n, 2.0, 3.0);
    std::vector<std::string> kept;
    for (const auto& c : configs) kept.push_back(c.config);
    const std::string args =
        axpy ? "[P(16,'float32'), P(32,'float32'), " + std::to_string(n) + ", 2.0]"
             : "[P(16,'float32'), P(32,'float32'), P(48,'float32'), " + std::to_string(n) + ", 2.0, 3.0]";
    EXPECT_EQ(kept, triton_decorated_run(kLibrary, name, args).kept) << name << ", n = " << n;
  }
}

TEST(Decorators, EachConfigCompilesToTheKernelTritonPicksForIt) {
  // Heuristics below the tuner read each config's BLOCK; above it, the call's arguments only.
  const std::pair<const char*, const char*> cases[] = {
      {"tuned_then_heuristic_copy", "[P(16,'float32'), P(32,'float32'), 4096]"},
      {"heuristic_over_tuned_fill", "[P(16,'float32'), None, 1000, 1.5]"},
  };
  for (const auto& [name, args] : cases) {
    auto& fn = JitFunction::get(kLibrary, name);
    const auto configs = std::string(name) == "tuned_then_heuristic_copy"
                             ? fn.compile_configs(Target::parse("cuda:90"), {}, fptr(16), fptr(32), 4096)
                             : fn.compile_configs(Target::parse("cuda:90"), {}, fptr(16), nullptr, 1000, 1.5);
    for (std::size_t i = 0; i < configs.size(); ++i) {
      ASSERT_NE(configs[i].artifact, nullptr) << configs[i].error;
      EXPECT_EQ(configs[i].artifact->metadata.hash,
                triton_decorated_run(kLibrary, name, args, static_cast<int>(i)).hash)
          << name << ", config {" << configs[i].config << "}";
    }
  }
}

}  // namespace
}  // namespace tritonrt::test

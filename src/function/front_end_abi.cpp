// The core's side of src/function/front_end_abi.h.

#include "function/front_end_abi.h"

#include <map>
#include <memory>
#include <mutex>

#include "compiler/compiler.h"

namespace tritonrt::detail {
namespace {

thread_local bool in_front_end_launch = false;

// Marks this thread's front-end launch while it runs (a grid function's Python may launch
// another kernel inside it).
class FrontEndLaunch {
 public:
  FrontEndLaunch() : outer_(in_front_end_launch) { in_front_end_launch = true; }
  ~FrontEndLaunch() { in_front_end_launch = outer_; }
  FrontEndLaunch(const FrontEndLaunch&) = delete;
  FrontEndLaunch& operator=(const FrontEndLaunch&) = delete;

 private:
  bool outer_;
};

}  // namespace

bool front_end_launch_running() noexcept { return in_front_end_launch; }

struct FrontEndAccess {
  static JitFunction& live_kernel(std::string_view source, std::string_view name) {
    return JitFunction::get(source, name, true);
  }
  static JitFunction& object_kernel(const void* object) {
    // Keyed by address: the bridge holds every object it described, so none is freed and its
    // address given to another. Describing runs with the GIL held, outside the lock; a
    // thread that described the same object meanwhile wins, and this description is dropped.
    static std::mutex mutex;
    static std::map<const void*, std::unique_ptr<JitFunction>> described;
    {
      std::lock_guard lock(mutex);
      if (auto found = described.find(object); found != described.end()) return *found->second;
    }
    auto made = std::unique_ptr<JitFunction>(new JitFunction(object_kernel_description(object)));
    std::lock_guard lock(mutex);
    return *described.try_emplace(object, std::move(made)).first->second;
  }
  static const Artifact& launch(JitFunction& fn, const LaunchConfig& config, std::span<const Arg> args) {
    const FrontEndLaunch marked;
    return fn.launch_artifact(config, args);
  }
};

}  // namespace tritonrt::detail

extern "C" const tritonrt::detail::FrontEndApi* tritonrt_front_end_api(std::uint32_t version) {
  using tritonrt::detail::FrontEndAccess, tritonrt::detail::FrontEndApi;
  static constexpr FrontEndApi api{FrontEndApi::kVersion, &FrontEndAccess::live_kernel, &FrontEndAccess::object_kernel,
                                   &FrontEndAccess::launch, &tritonrt::detail::files_for_triton};
  return version == FrontEndApi::kVersion ? &api : nullptr;
}

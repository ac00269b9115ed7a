#include "compiler/compiler.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "common/errors.h"

namespace tritonrt::detail {
namespace {

// The process's Python C API, if it has one, looked up without linking libpython.
struct HostPython {
  int (*is_initialized)() = nullptr;
  int (*gil_check)() = nullptr;
  void* (*save_thread)() = nullptr;
  void (*restore_thread)(void*) = nullptr;

  HostPython() {
    is_initialized = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "Py_IsInitialized"));
    gil_check = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "PyGILState_Check"));
    save_thread = reinterpret_cast<void* (*)()>(dlsym(RTLD_DEFAULT, "PyEval_SaveThread"));
    restore_thread = reinterpret_cast<void (*)(void*)>(dlsym(RTLD_DEFAULT, "PyEval_RestoreThread"));
  }
  bool present() const { return is_initialized && gil_check && save_thread && restore_thread; }
};

HostPython host_python() {
  static const HostPython cached;
  if (cached.present()) return cached;
  return HostPython();  // the compiler may have loaded libpython since: look again
}

std::filesystem::path module_path() {
  if (const char* p = std::getenv("TRITONRT_PYTHON_MODULE"); p && *p) return p;
  // Next to libtritonrt itself, in the build tree and once installed.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&module_path), &info) == 0 || info.dli_fname == nullptr) {
    raise<PythonError>({}, "cannot locate libtritonrt to find its compiler module; set TRITONRT_PYTHON_MODULE");
  }
  return std::filesystem::path(info.dli_fname).parent_path() / "libtritonrt_python.so";
}

Compiler* load_compiler() {
  if (dlsym(RTLD_DEFAULT, "Py_IsInitialized") == nullptr) {
    // No Python in this process: bring in the one tritonrt was built against, globally, so
    // the module's Python symbols bind to it.
    const char* library = std::getenv("TRITONRT_LIBPYTHON");
    if (library == nullptr || *library == '\0') library = TRITONRT_LIBPYTHON;
    if (dlopen(library, RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      const char* why = dlerror();
      raise<PythonError>({}, std::string("compiling needs Python, and ") + library + " could not be loaded: " +
                                 (why ? why : "unknown reason") + " (set TRITONRT_LIBPYTHON)");
    }
  }
  const auto path = module_path();
  void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (module == nullptr) {
    const char* why = dlerror();
    raise<PythonError>({}, "cannot load the compiler module " + path.string() + ": " + (why ? why : "unknown reason"));
  }
  auto make = reinterpret_cast<Compiler* (*)()>(dlsym(module, "tritonrt_make_compiler"));
  if (make == nullptr) raise<PythonError>({}, path.string() + " is not a tritonrt compiler module");
  return make();
}

}  // namespace

Compiler& Compiler::get() {
  // The module lives as long as the process. A failed load throws and is retried next time.
  static std::mutex mutex;
  static Compiler* compiler = nullptr;
  std::lock_guard lock(mutex);
  if (compiler == nullptr) compiler = load_compiler();
  return *compiler;
}

GilReleased::GilReleased() {
  const HostPython py = host_python();
  if (py.present() && py.is_initialized() && py.gil_check()) state_ = py.save_thread();
}

GilReleased::~GilReleased() {
  if (state_ != nullptr) host_python().restore_thread(state_);
}

}  // namespace tritonrt::detail

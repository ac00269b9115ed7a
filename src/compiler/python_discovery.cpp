#include "compiler/python_discovery.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "common/errors.h"
#include "common/log.h"

extern char** environ;

namespace tritonrt::detail {
namespace {

using Clock = std::chrono::steady_clock;

// What a candidate is asked: "<major.minor>\n<its shared libpython>\n<True if it finds triton>".
constexpr const char* kProbe =
    "import sys, os, sysconfig, importlib.util as u; "
    "print('%d.%d' % sys.version_info[:2]); "
    "print(os.path.join(sysconfig.get_config_var('LIBDIR') or '', sysconfig.get_config_var('LDLIBRARY') or '')); "
    "print(u.find_spec('triton') is not None)";
constexpr std::size_t kMaxProbeOutput = 64 * 1024;

// How long a candidate may take to answer: TRITONRT_PYTHON_TIMEOUT seconds, default 30.
std::chrono::milliseconds probe_timeout() {
  const char* text = std::getenv("TRITONRT_PYTHON_TIMEOUT");
  if (text == nullptr || *text == '\0') return std::chrono::seconds(30);
  double seconds = 0;
  const std::string_view value(text);
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (error != std::errc() || end != value.data() + value.size() || !(seconds > 0) || seconds > 86400) {
    raise<PythonError>({}, "TRITONRT_PYTHON_TIMEOUT must be a number of seconds above 0, got '{}'", value);
  }
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}

// Milliseconds left until `deadline`, at least 0.
int left_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::max<long long>(0, left));
}

// What a candidate prints on `fd` until it closes it, or "" with `why` set: it did not
// answer by `deadline`, or printed more than an answer.
std::string read_answer(int fd, Clock::time_point deadline, std::chrono::milliseconds timeout, std::string& why) {
  std::string out;
  while (true) {
    pollfd wait{fd, POLLIN, 0};
    const int ready = ::poll(&wait, 1, left_ms(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      why = ready == 0
                ? fmt::format("it did not answer within {:g} s (TRITONRT_PYTHON_TIMEOUT)", timeout.count() / 1000.0)
                : "it could not be read";
      return "";
    }
    char buffer[4096];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out;
    if (out.size() + static_cast<std::size_t>(n) > kMaxProbeOutput) {
      why =
          "it printed more than a Python answering the probe does (over " + std::to_string(kMaxProbeOutput) + " bytes)";
      return "";
    }
    out.append(buffer, static_cast<std::size_t>(n));
  }
}

// The exit status of `pid`, whose output has ended; `why` set when it has not exited by `deadline`.
int wait_for_exit(pid_t pid, Clock::time_point deadline, std::string& why) {
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (left_ms(deadline) == 0) {
      why = "it did not exit within the time limit (TRITONRT_PYTHON_TIMEOUT)";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return status;
}

// Runs `program -c kProbe` (stdin and stderr /dev/null, its own process group) and returns
// what it printed, or nullopt with `why`: it could not start, ran past `timeout` (then it is
// killed), printed more than kMaxProbeOutput, or did not exit with status 0.
std::optional<std::string> ask_python(const std::string& program, std::chrono::milliseconds timeout, std::string& why) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    why = "it could not be run (no pipe)";
    return std::nullopt;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  std::string dash_c = "-c", probe = kProbe, path = program;
  char* argv[] = {path.data(), dash_c.data(), probe.data(), nullptr};
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, program.c_str(), &actions, &attributes, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(pipe_fds[1]);
  if (spawned != 0) {
    ::close(pipe_fds[0]);
    why = "it could not be run: " + std::error_code(spawned, std::generic_category()).message();
    return std::nullopt;
  }
  const auto deadline = Clock::now() + timeout;
  std::string out = read_answer(pipe_fds[0], deadline, timeout, why);
  ::close(pipe_fds[0]);
  int status = 0;
  if (why.empty()) status = wait_for_exit(pid, deadline, why);
  if (!why.empty()) {
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return std::nullopt;
  }
  if (WIFSIGNALED(status)) {
    why = "it was ended by signal " + std::to_string(WTERMSIG(status));
    return std::nullopt;
  }
  if (WEXITSTATUS(status) != 0) {
    why = "it exited with status " + std::to_string(WEXITSTATUS(status)) + " when asked about itself";
    return std::nullopt;
  }
  return out;
}

bool is_version(const std::string& text) {
  const auto dot = text.find('.');
  const auto digits = [](std::string_view s) {
    return !s.empty() && s.size() <= 3 && s.find_first_not_of("0123456789") == std::string_view::npos;
  };
  return dot != std::string::npos && digits(std::string_view(text).substr(0, dot)) &&
         digits(std::string_view(text).substr(dot + 1));
}

// Whether `program` can be embedded; `why` says why not.
std::optional<EmbeddedPython> usable_python(const std::string& program, std::chrono::milliseconds timeout,
                                            std::string& why) {
  const auto answer = ask_python(program, timeout, why);
  if (!answer) return std::nullopt;
  std::istringstream lines(*answer);
  std::string version, library, has_triton;
  std::getline(lines, version);
  std::getline(lines, library);
  std::getline(lines, has_triton);
  std::error_code ec;
  if (!is_version(version)) {
    why = "it did not answer as Python does (it printed '" + printable(answer->substr(0, 60)) +
          (answer->size() > 60 ? "...'" : "'") + ")";
  } else if (version != TRITONRT_PYTHON_VERSION) {
    why = "it is Python " + version + ", the compiler module was built for " TRITONRT_PYTHON_VERSION;
  } else if (!library.ends_with(".so") && library.find(".so.") == std::string::npos) {
    why = "it has no shared libpython (" + printable(library) + ")";
  } else if (!std::filesystem::exists(library, ec)) {
    why = "its libpython " + printable(library) + " is not there";
  } else if (has_triton != "True") {
    why = "it cannot import triton";
  } else {
    return EmbeddedPython{program, library};
  }
  return std::nullopt;
}

// `name` looked up in PATH's folders, as a shell finds a program, or "".
std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view rest = path != nullptr ? path : "";
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const std::filesystem::path candidate = std::filesystem::path(rest.substr(0, colon)) / name;
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// The Python of the environment libtritonrt is installed in, as pip installs it
// (<prefix>/lib/pythonX.Y/site-packages/tritonrt/lib/), or "".
std::string installed_environment_python() {
  const auto library = library_path();
  if (!library) return "";
  for (auto dir = library->parent_path(); dir.has_relative_path(); dir = dir.parent_path()) {
    const std::string python = dir.parent_path().filename().string();  // python3.12
    if (dir.filename() == "site-packages" && python.starts_with("python3")) {
      return (dir.parent_path().parent_path().parent_path() / "bin" / python).string();
    }
  }
  return "";
}

// Where each candidate comes from, and the program, in the order they are tried.
std::vector<std::pair<std::string, std::string>> candidates() {
  std::vector<std::pair<std::string, std::string>> out;
  if (const char* p = std::getenv("TRITONRT_PYTHON"); p && *p) {
    const std::string given = p;
    const std::string found = given.find('/') == std::string::npos ? find_on_path(given) : given;
    out.emplace_back(found.empty() || found == given ? "TRITONRT_PYTHON" : "TRITONRT_PYTHON=" + given + ", on PATH",
                     found.empty() ? given : found);
    return out;
  }
  if (const char* venv = std::getenv("VIRTUAL_ENV"); venv && *venv) {
    out.emplace_back("VIRTUAL_ENV", (std::filesystem::path(venv) / "bin" / "python3").string());
  }
  if (const char* conda = std::getenv("CONDA_PREFIX"); conda && *conda) {
    out.emplace_back("CONDA_PREFIX", (std::filesystem::path(conda) / "bin" / "python3").string());
  }
  if (const std::string own = installed_environment_python(); !own.empty()) {
    out.emplace_back("the environment tritonrt is installed in", own);
  }
  if (const std::string on_path = find_on_path("python3"); !on_path.empty()) out.emplace_back("PATH", on_path);
  // None for a wheel: it was built in a temporary environment.
  if (*TRITONRT_BUILD_PYTHON != '\0') out.emplace_back("the build's", TRITONRT_BUILD_PYTHON);
  return out;
}

}  // namespace

std::optional<std::filesystem::path> library_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&library_path), &info) == 0 || info.dli_fname == nullptr) return std::nullopt;
  std::error_code ec;
  auto path = std::filesystem::absolute(info.dli_fname, ec);
  if (ec) return std::nullopt;
  return path;
}

const EmbeddedPython& embedded_python() {
  static std::mutex mutex;
  static std::optional<EmbeddedPython> found;
  std::lock_guard lock(mutex);
  if (found) return *found;
  const char* library = std::getenv("TRITONRT_LIBPYTHON");
  const bool library_given = library != nullptr && *library != '\0';
  const auto timeout = probe_timeout();
  std::string tried;
  for (const auto& [from, program] : candidates()) {
    std::string why;
    std::error_code ec;
    const bool exists = std::filesystem::exists(program, ec);
    if (ec) {
      why = "it cannot be looked at (" + ec.message() + ")";
    } else if (!exists) {
      why = program.find('/') == std::string::npos ? "it is not on PATH" : "it is not there";
    } else if (::access(program.c_str(), X_OK) != 0) {
      why = "it cannot be run (" + std::string(std::strerror(errno)) + ")";
    } else if (auto usable = usable_python(program, timeout, why)) {
      if (library_given) usable->library = library;
      found = std::move(*usable);
      log(LogLevel::debug, "embedding {} ({}), libpython {}", found->program, from, found->library);
      return *found;
    }
    tried += "\n  " + program + " (" + from + "): " + why;
  }
  raise<PythonError>({},
                     "compiling needs Python, and no usable one was found (set TRITONRT_PYTHON to a Python {} that has "
                     "triton); tried:{}",
                     TRITONRT_PYTHON_VERSION, tried);
}

}  // namespace tritonrt::detail

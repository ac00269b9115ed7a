#include "store/files.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <system_error>
#include <utility>

namespace tritonrt::detail {
namespace {

std::string errno_text(int error) { return std::error_code(error, std::generic_category()).message(); }

// What a file that is not a regular file is, as the end of a sentence about it.
std::string not_regular(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISFIFO(mode)) return "is a FIFO, not a regular file";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device, not a regular file";
  if (S_ISSOCK(mode)) return "is a socket, not a regular file";
  if (S_ISLNK(mode)) return "is a symbolic link that leads nowhere";
  return "is not a regular file";
}

bool inside_dev(const std::filesystem::path& resolved) {
  const std::string text = resolved.string();
  return text == "/dev" || text.starts_with("/dev/");
}

// `path` with its symbolic links resolved, so that what is checked is what gets written.
std::filesystem::path resolved(const std::filesystem::path& path) {
  std::error_code ec;
  auto out = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  return ec ? path : out;
}

// `path` made absolute with the links of its folders resolved and its own name kept: the
// entry that is written, never what a link planted there points to.
std::filesystem::path entry_of(const std::filesystem::path& path) {
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(path, ec);
  if (ec || !absolute.has_filename()) return resolved(path);
  const auto folder = std::filesystem::weakly_canonical(absolute.parent_path(), ec);
  return ec ? absolute : folder / absolute.filename();
}

}  // namespace

InputFile::InputFile(const std::filesystem::path& path) {
  // stat first: what is not a regular file is never opened (opening a device can act on it).
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    error_ = errno == ENOENT ? "does not exist" : "cannot be read: " + errno_text(errno);
    return;
  }
  if (!S_ISREG(st.st_mode)) {
    error_ = not_regular(st.st_mode);
    return;
  }
  // O_NONBLOCK: had a FIFO replaced the file since, the open still returns (and fstat refuses it).
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd_ < 0) {
    error_ = "cannot be read: " + errno_text(errno);
    return;
  }
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    error_ = S_ISREG(st.st_mode) ? "cannot be read: " + errno_text(errno) : not_regular(st.st_mode);
    ::close(fd_);
    fd_ = -1;
    return;
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<std::string> InputFile::read(std::uint64_t offset, std::size_t count) const {
  if (fd_ < 0 || offset > size_ || count > size_ - offset) return std::nullopt;
  std::string out(count, '\0');
  std::size_t done = 0;
  while (done < count) {
    const ssize_t n = ::pread(fd_, out.data() + done, count - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;  // an error, or the file was cut meanwhile
    done += static_cast<std::size_t>(n);
  }
  return out;
}

MappedFile::MappedFile(const InputFile& file, std::string& error) {
  if (!file.error().empty()) {
    error = file.error();
    return;
  }
  if (file.size() == 0) return;
  void* mapped = ::mmap(nullptr, static_cast<std::size_t>(file.size()), PROT_READ, MAP_PRIVATE, file.descriptor(), 0);
  if (mapped == MAP_FAILED) {
    error = "it cannot be mapped: " + std::error_code(errno, std::generic_category()).message();
    return;
  }
  data_ = static_cast<const char*>(mapped);
  size_ = static_cast<std::size_t>(file.size());
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

std::optional<std::string> read_file(const std::filesystem::path& path, std::size_t limit, std::string& why) {
  const InputFile file(path);
  if (!file.error().empty()) {
    why = file.error();
    return std::nullopt;
  }
  if (file.size() > limit) {
    why = "is larger than tritonrt reads (" + std::to_string(file.size()) + " bytes; at most " + std::to_string(limit) +
          ")";
    return std::nullopt;
  }
  auto bytes = file.read(0, static_cast<std::size_t>(file.size()));
  if (!bytes) why = "could not be read whole (changed while it was read?)";
  return bytes;
}

std::string output_problem(const std::filesystem::path& path) {
  if (path.empty()) return "no path was given";
  const auto target = resolved(path);
  if (inside_dev(target)) return "it leads into /dev (" + target.string() + "); tritonrt writes only regular files";
  const auto entry = entry_of(path);
  struct stat st {};
  if (::lstat(entry.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    return "it is a symbolic link (to " + target.string() +
           "); tritonrt does not write through links (remove the link, or name the file it points to)";
  }
  if (::lstat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return "it " + not_regular(st.st_mode) + "; tritonrt replaces only regular files";
  }
  return "";
}

std::string create_private_directories(const std::filesystem::path& dir) {
  std::filesystem::path at;
  for (const auto& part : dir) {
    at /= part;
    if (::mkdir(at.c_str(), 0700) != 0 && errno != EEXIST) {
      return "could not create the folder " + at.string() + ": " + errno_text(errno);
    }
  }
  std::error_code ec;
  return std::filesystem::is_directory(dir, ec) ? "" : dir.string() + " is not a folder";
}

std::string write_whole_file(const std::filesystem::path& path, const std::string& bytes, NewFolders folders) {
  static std::atomic<unsigned> counter{0};
  if (const std::string problem = output_problem(path); !problem.empty()) {
    return "could not write " + path.string() + ": " + problem;
  }
  // Renamed over the entry itself: a link planted there after the check is replaced, not followed.
  const auto target = entry_of(path);
  if (target.has_parent_path()) {
    std::error_code ec;
    if (folders == NewFolders::private_to_user) {
      if (const std::string why = create_private_directories(target.parent_path()); !why.empty()) return why;
    } else {
      std::filesystem::create_directories(target.parent_path(), ec);
    }
  }
  const auto temporary = target.string() + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  const auto failed = [&](const std::string& what) {
    const std::string why = what + ": " + errno_text(errno);
    ::unlink(temporary.c_str());
    return why;
  };
  // O_EXCL: the temporary name is new, never something planted there.
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
  if (fd < 0) {
    return "could not write " + temporary + " (is " + target.parent_path().string() +
           " writable?): " + errno_text(errno);
  }
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return failed("could not write " + temporary + " (space left on " + target.parent_path().string() + "?)");
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) return failed("could not write " + temporary);
  if (::rename(temporary.c_str(), target.c_str()) != 0) {
    return failed("could not rename " + temporary + " to " + target.string());
  }
  return "";
}

}  // namespace tritonrt::detail

// Files as tritonrt reads and writes them. Nothing it reads may make it wait or fill memory: a
// file is read only when it is a regular file (a FIFO, device or socket is refused without
// being read), never past a size limit, and only as far as its header says. Nothing it writes
// replaces what is not a regular file, or reaches into /dev.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace tritonrt::detail {

/// The most tritonrt reads of a text file: kernel sources, records' JSON, calls files.
inline constexpr std::size_t kMaxTextBytes = std::size_t{64} << 20;
/// The most it reads of a compiled kernel's binary.
inline constexpr std::size_t kMaxBinaryBytes = std::size_t{1} << 30;

/// A regular file opened for reading without blocking, or why it is not one.
class InputFile {
 public:
  /// Opens `path`: anything but a regular file it can read leaves error() saying what it is.
  explicit InputFile(const std::filesystem::path& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  /// "" when open; else e.g. "does not exist", "is a directory", "is a FIFO, not a regular file".
  const std::string& error() const { return error_; }
  std::uint64_t size() const { return size_; }

  /// Exactly `count` bytes from `offset`, or nullopt when the file holds fewer (or a read fails).
  std::optional<std::string> read(std::uint64_t offset, std::size_t count) const;
  /// The open file descriptor (to map the file), owned by this object; -1 when not open.
  int descriptor() const { return fd_; }

 private:
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::string error_;
};

/// A regular file mapped whole and read-only (MAP_PRIVATE) for this object's life: what is
/// looked at is paged in, nothing is copied. Empty for a file of no bytes.
class MappedFile {
 public:
  MappedFile() = default;
  /// Maps the open `file`; on failure stays empty and `error` says why.
  MappedFile(const InputFile& file, std::string& error);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;

  const char* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

/// The whole regular file at `path`, or nullopt with `why` saying why not (what InputFile
/// says, or that it is larger than `limit` bytes).
std::optional<std::string> read_file(const std::filesystem::path& path, std::size_t limit, std::string& why);

/// Folders write_whole_file creates: with the user's usual permissions, or private (0700).
enum class NewFolders { usual, private_to_user };

/// Why `path` cannot be written as a regular file ("" when it can): it leads into /dev, it is
/// a symbolic link, or something other than a regular file (a device, FIFO, socket or folder)
/// is there.
std::string output_problem(const std::filesystem::path& path);

/// Writes `bytes` to `path` (creating its folder) through a temporary file renamed into
/// place, so that readers in any process see the whole file or none; links in the folders
/// above are followed, a link at `path` itself never (output_problem refuses it, and one
/// planted after that check is replaced by the rename). Refuses what output_problem refuses. Returns ""
/// when written, otherwise why not (the temporary file is removed).
std::string write_whole_file(const std::filesystem::path& path, const std::string& bytes,
                             NewFolders folders = NewFolders::usual);

/// Creates `dir` and the folders above it that are missing, each new one private to the
/// user (0700); returns "" or why not.
std::string create_private_directories(const std::filesystem::path& dir);

}  // namespace tritonrt::detail

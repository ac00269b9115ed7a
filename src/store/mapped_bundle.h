// A bundle file mapped read-only for the life of the object (or a bundle embedded in the
// program, read where it lies): its header and table checked and parsed when it is opened, a
// kernel's entry when the kernel is first got (the format: store/bundle.h).
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "store/bundle.h"
#include "store/files.h"

namespace tritonrt::detail {

class MappedBundle {
 public:
  /// A bundle embedded in the program (by tritonrt_add_kernels) or copied out of a binary;
  /// `bytes` outlive the object. `name` says where it is, for messages.
  MappedBundle(std::string name, std::string_view bytes);
  explicit MappedBundle(const std::filesystem::path& path);
  MappedBundle(const MappedBundle&) = delete;
  MappedBundle& operator=(const MappedBundle&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::size_t size() const { return size_; }
  const std::string& created_by() const { return created_by_; }
  const std::vector<std::unique_ptr<MappedKernel>>& kernels() const { return kernels_; }
  std::string_view bytes(std::size_t offset, std::size_t size) const {
    return std::string_view(data_ + data_start_ + offset, size);
  }

  /// Reads `kernel`'s entry once (callers serialize): checked against its checksum, every
  /// binary it names within the file.
  void complete(MappedKernel& kernel) const;

 private:
  bool within(std::size_t offset, std::size_t size) const;
  [[noreturn]] void damaged(const std::string& why) const;
  void read_header(std::string_view head);
  void read_table();

  std::filesystem::path path_;
  MappedFile mapping_;  ///< a bundle file's bytes (an embedded bundle's are the program's)
  const char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t data_start_ = 0;  ///< where the data (entries and binaries) starts
  std::size_t table_size_ = 0;
  std::string table_sha256_;
  std::string created_by_;
  std::vector<std::unique_ptr<MappedKernel>> kernels_;
};

}  // namespace tritonrt::detail

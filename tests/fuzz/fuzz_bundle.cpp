// Bundles are files a deployment receives (src/store/bundle.h): read_bundle with
// BundleCheck::everything reads the header, the table, every kernel's entry and every binary,
// and must return or throw ArtifactError. Two ways in, chosen by the input's first byte:
//  - raw: the rest is the whole file;
//  - fixed: the rest is a table and the data after it (split at the first NUL byte), put
//    behind a right header, with each entry's checksum in the table made right where the
//    table names one inside the data, so that entries are read too.
// The file lives in memory (memfd) and is read through its /proc/self/fd path.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/sha256.h"
#include "fuzz_check.h"
#include "store/bundle.h"
#include "tritonrt/bundle.h"
#include "tritonrt/error.h"

namespace {

// The table with each kernel's entry checksum computed from `data`, where it names a range of it.
std::string fix_entry_checksums(std::string_view table, std::string_view data) {
  auto j = nlohmann::json::parse(table, nullptr, false);
  if (!j.is_object() || !j.contains("kernels") || !j["kernels"].is_array()) return std::string(table);
  for (auto& kernel : j["kernels"]) {
    if (!kernel.is_object() || !kernel.contains("entry")) continue;
    auto& entry = kernel["entry"];
    if (!entry.is_array() || entry.size() != 3 || !entry[0].is_number_unsigned() || !entry[1].is_number_unsigned()) {
      continue;
    }
    const auto offset = entry[0].get<std::uint64_t>(), length = entry[1].get<std::uint64_t>();
    if (offset <= data.size() && length <= data.size() - offset) {
      entry[2] = tritonrt::detail::sha256_hex(data.substr(offset, length));
    }
  }
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(bytes) + 1, size - 1);
  std::string file;
  if ((bytes[0] & 1) == 0) {
    file = rest;
  } else {
    const auto nul = rest.find('\0');
    const std::string_view data = nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);
    const std::string table = fix_entry_checksums(rest.substr(0, nul), data);
    file = std::string(tritonrt::detail::kBundleMagic) + " " + std::to_string(tritonrt::detail::kBundleFormat) + " " +
           std::to_string(table.size()) + " " + tritonrt::detail::sha256_hex(table) + "\n" +
           table + std::string(data);
  }
  const int fd = ::memfd_create("fuzz.trb", MFD_CLOEXEC);
  FUZZ_CHECK(fd >= 0);
  FUZZ_CHECK(::write(fd, file.data(), file.size()) == static_cast<ssize_t>(file.size()));
  try {
    const auto info = tritonrt::read_bundle("/proc/self/fd/" + std::to_string(fd), tritonrt::BundleCheck::everything);
    FUZZ_CHECK(info.bytes == file.size());
  } catch (const tritonrt::ArtifactError& e) {
    check_error_format(e);
  }
  ::close(fd);
  return 0;
}

// tritonrt's index reads record files that anyone with write access to the folder may have
// changed (src/store/index.h). Two ways in, chosen by the input's first byte (which also
// picks the record's kind, and a kernel named by path or by module):
//  - raw: the rest is a whole file, read by parse_index_record (header, sizes, checksum,
//    JSON), which must answer a record or a reason, never throw or crash;
//  - wrapped: the rest is JSON and a binary (split at the first NUL byte) put in a record
//    with a right header and checksum, then read back by KernelIndex from its folder, so
//    that every field the index reads from a record is reached.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <variant>

#include "fuzz_check.h"
#include "store/index.h"
#include "tritonrt/log.h"

namespace {

namespace fs = std::filesystem;
using tritonrt::detail::IndexRecord;
using tritonrt::detail::KernelIndex;

constexpr std::string_view kKinds[] = {"kernel", "artifact", "choice", "heuristic"};
constexpr std::string_view kName = "k", kKey = "fingerprint|cuda:90|key";

// The index's scratch folder, removed when libFuzzer exits. Never destroyed itself: a static
// path would be destroyed before an exit handler registered while constructing it runs, and
// the folder (hundreds of MB after a run) would stay in /tmp.
const fs::path& scratch() {
  static const fs::path* const dir = [] {
    std::string pattern = (fs::temp_directory_path() / "tritonrt-fuzz-index-XXXXXX").string();
    FUZZ_CHECK(::mkdtemp(pattern.data()) != nullptr);
    tritonrt::set_log_level(tritonrt::LogLevel::off);  // set-aside warnings, thousands a second
    auto* path = new fs::path(pattern);
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(scratch(), ec);
    });
    return path;
  }();
  return *dir;
}

void write(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view kind = kKinds[data[0] % 4];
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 4) == 0) {
    const auto parsed = tritonrt::detail::parse_index_record(kind, rest);
    if (const auto* record = std::get_if<IndexRecord>(&parsed)) FUZZ_CHECK(record->json.is_object());
    return 0;
  }
  const auto nul = rest.find('\0');
  const std::string_view json = rest.substr(0, nul);
  const std::string_view binary = nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);
  const std::string file = tritonrt::detail::compose_index_record(kind, json, binary);
  // What the index writes, it reads back: only the JSON may be found wanting, never the
  // header, the sizes or the checksum.
  const auto parsed = tritonrt::detail::parse_index_record(kind, file);
  if (const auto* why = std::get_if<std::string>(&parsed)) {
    FUZZ_CHECK(why->find("header") == std::string::npos && why->find("checksum") == std::string::npos &&
               why->find("size") == std::string::npos);
  }
  const KernelIndex index(scratch());
  // A kernel named by path (its record must name that file first) or by module.
  const std::string_view kSource = (data[0] & 8) != 0 ? "fuzz.kernels" : "/fuzz/kernels.py";
  std::string why;
  if (kind == "kernel") {
    write(index.kernel_dir(kSource, kName) / "kernel", file);
    (void)index.find_kernel(kSource, kName, why);
    std::vector<tritonrt::detail::SkippedKernel> skipped;
    (void)index.list(skipped);
  } else if (kind == "artifact") {
    write(index.keyed_file(kSource, kName, std::string(kKey), ".artifact"), file);
    (void)index.find_artifact(kSource, kName, std::string(kKey), tritonrt::Target::parse("cuda:90"));
  } else if (kind == "choice") {
    write(index.keyed_file(kSource, kName, std::string(kKey), ".choice"), file);
    (void)index.find_choice(kSource, kName, std::string(kKey));
  } else {
    write(index.keyed_file(kSource, kName, std::string(kKey), ".heuristic"), file);
    for (const auto& value : index.find_heuristic(kSource, kName, std::string(kKey))) (void)value.size();
  }
  return 0;
}

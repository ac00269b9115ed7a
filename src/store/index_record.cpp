#include "store/index_record.h"

#include <sstream>

#include "common/errors.h"
#include "common/json.h"
#include "common/sha256.h"
#include "store/files.h"

namespace tritonrt::detail {
namespace {

constexpr std::string_view kMagic = "tritonrt-index";
constexpr std::size_t kMaxHeader = 256;

}  // namespace

JsonReader<ArtifactError> index_record_reader(std::string_view kind) {
  return JsonReader<ArtifactError>({}, "the index's " + std::string(kind) + " record");
}

// A record: "tritonrt-index <format> <kind> <json bytes> <binary bytes> <sha256 of both>\n",
// then the JSON, then the binary.
std::string compose_index_record(std::string_view kind, std::string_view json, std::string_view binary) {
  const std::string digest = Sha256().update(json).update(binary).hex();
  std::string out = std::string(kMagic) + " " + std::to_string(kIndexFormat) + " " + std::string(kind) + " " +
                    std::to_string(json.size()) + " " + std::to_string(binary.size()) + " " + digest + "\n";
  out += json;
  out += binary;
  return out;
}

std::optional<IndexHeader> parse_index_header(std::string_view bytes, std::string_view kind, std::string& why) {
  const auto newline = bytes.substr(0, kMaxHeader).find('\n');
  if (!bytes.starts_with(kMagic) || newline == std::string_view::npos) {
    why = "its header is not a tritonrt index header";
    return std::nullopt;
  }
  std::istringstream line{std::string(bytes.substr(0, newline))};
  std::string magic, found_kind, digest, rest;
  int format = 0;
  IndexHeader header;
  if (!(line >> magic >> format >> found_kind >> header.json_bytes >> header.binary_bytes >> digest) ||
      magic != kMagic || (line >> rest) || digest.size() != 64) {
    why = "its header is not a tritonrt index header";
    return std::nullopt;
  }
  if (format != kIndexFormat) {
    why = "it is in format " + std::to_string(format) + ", this tritonrt reads format " + std::to_string(kIndexFormat);
    return std::nullopt;
  }
  if (found_kind != kind) {
    why = "it holds a " + printable(found_kind) + ", not a " + std::string(kind);
    return std::nullopt;
  }
  if (header.json_bytes > kMaxTextBytes || header.binary_bytes > kMaxBinaryBytes) {
    why = "its header claims more than tritonrt reads (" + std::to_string(header.json_bytes) + " + " +
          std::to_string(header.binary_bytes) + " bytes)";
    return std::nullopt;
  }
  header.header_bytes = newline + 1;
  header.sha256 = std::move(digest);
  return header;
}

std::variant<IndexRecord, std::string> parse_index_record(std::string_view kind, std::string_view bytes) {
  std::string why;
  const auto header = parse_index_header(bytes, kind, why);
  if (!header) return why;
  const std::string_view body = bytes.substr(header->header_bytes);
  if (body.size() != header->json_bytes + header->binary_bytes) {
    return std::string("its size does not match its header (cut short or appended to)");
  }
  if (Sha256().update(body).hex() != header->sha256) return std::string("its checksum does not match (damaged)");
  IndexRecord out;
  try {
    out.json = index_record_reader(kind).parse(body.substr(0, header->json_bytes));
    if (!out.json.is_object()) index_record_reader(kind).fail("is not a JSON object");
  } catch (const Error& e) {
    return without_prefix(e.what());
  }
  out.binary = body.substr(header->json_bytes);
  return out;
}

std::variant<std::monostate, IndexRecord, std::string> read_index_record(const std::filesystem::path& path,
                                                                         std::string_view kind, bool with_binary) {
  const InputFile file(path);
  if (file.error() == "does not exist") return std::monostate{};
  if (!file.error().empty()) return "it " + file.error();
  const auto head = file.read(0, static_cast<std::size_t>(std::min<std::uint64_t>(file.size(), kMaxHeader)));
  if (!head) return std::string("it cannot be read");
  std::string why;
  const auto header = parse_index_header(*head, kind, why);
  if (!header) return why;
  if (file.size() != header->header_bytes + header->json_bytes + header->binary_bytes) {
    return std::string("its size does not match its header (cut short or appended to)");
  }
  const auto json = file.read(header->header_bytes, header->json_bytes);
  const auto binary = with_binary ? file.read(header->header_bytes + header->json_bytes, header->binary_bytes)
                                  : std::optional<std::string>("");
  if (!json || !binary) return std::string("it could not be read whole (changed while it was read?)");
  if (with_binary && Sha256().update(*json).update(*binary).hex() != header->sha256) {
    return std::string("its checksum does not match (damaged)");
  }
  if (!with_binary && header->binary_bytes == 0 && sha256_hex(*json) != header->sha256) {
    return std::string("its checksum does not match (damaged)");
  }
  IndexRecord out;
  try {
    out.json = index_record_reader(kind).parse(*json);
    if (!out.json.is_object()) index_record_reader(kind).fail("is not a JSON object");
  } catch (const Error& e) {
    return without_prefix(e.what());
  }
  out.binary = std::move(*binary);
  return out;
}

}  // namespace tritonrt::detail

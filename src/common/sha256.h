// SHA-256 (FIPS 180-4), for content checks without Python or a crypto library: the kernel
// index's checksums and the fingerprints of the sources a kernel was compiled from.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace tritonrt::detail {

class Sha256 {
 public:
  Sha256();
  Sha256& update(std::string_view bytes);
  /// The digest as 64 lowercase hex digits; the object is spent afterwards.
  std::string hex();

 private:
  void block(const unsigned char* p);
  std::array<std::uint32_t, 8> state_;
  std::array<unsigned char, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;  ///< bytes hashed so far
};

/// SHA-256 of `bytes`, as hex.
inline std::string sha256_hex(std::string_view bytes) { return Sha256().update(bytes).hex(); }

}  // namespace tritonrt::detail

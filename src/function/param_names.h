// A kernel's parameter names, indexed for BoundArgs: a grid function's `a.integer("BLOCK_M")`
// runs on every launch, and scanning the signature's ParamInfo records (each about 130 bytes,
// the name's text behind a pointer) cost about 260 instructions per lookup at 20 parameters.
// Here a name is hashed from its length and its first and last bytes (a few loads), found
// through a small open-addressed table, and compared as text once.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "tritonrt/signature.h"

namespace tritonrt::detail {

class ParamNames {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  ParamNames() = default;
  explicit ParamNames(const KernelSignature& signature) : signature_(&signature) {
    const std::size_t n = signature.params.size();
    shift_ = 64 - std::max(4, static_cast<int>(std::bit_width(2 * n)));  // at most half full
    slots_.assign(std::size_t{1} << (64 - shift_), 0);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t w = word(signature.params[i].name);
      words_.push_back(w);
      std::size_t s = slot(w);
      while (slots_[s] != 0) s = (s + 1) & (slots_.size() - 1);
      slots_[s] = static_cast<std::uint16_t>(i + 1);
    }
  }

  // The index of parameter `name`, or npos (the first of two of one name).
  std::size_t find(std::string_view name) const noexcept {
    if (slots_.empty()) return npos;
    const std::uint64_t w = word(name);
    for (std::size_t s = slot(w);; s = (s + 1) & (slots_.size() - 1)) {
      const std::size_t entry = slots_[s];
      if (entry == 0) return npos;
      if (words_[entry - 1] == w && signature_->params[entry - 1].name == name) return entry - 1;
    }
  }

 private:
  // A mix of the length and the first and last eight bytes (four, for shorter names).
  static std::uint64_t word(std::string_view s) noexcept {
    const std::size_t n = s.size();
    std::uint64_t first = 0, last = 0;
    if (n >= 8) {
      std::memcpy(&first, s.data(), 8);
      std::memcpy(&last, s.data() + n - 8, 8);
    } else if (n >= 4) {
      std::uint32_t a, b;
      std::memcpy(&a, s.data(), 4);
      std::memcpy(&b, s.data() + n - 4, 4);
      first = a;
      last = b;
    } else {
      for (std::size_t i = 0; i < n; ++i)
        first |= static_cast<std::uint64_t>(static_cast<unsigned char>(s[i])) << (8 * i);
    }
    return (first * 0x9E3779B97F4A7C15ull) ^ (last + n) * 0xC2B2AE3D27D4EB4Full;
  }
  std::size_t slot(std::uint64_t w) const noexcept { return w >> shift_; }

  const KernelSignature* signature_ = nullptr;
  std::vector<std::uint64_t> words_;  // by parameter
  std::vector<std::uint16_t> slots_;  // parameter + 1, or 0
  int shift_ = 64;
};

}  // namespace tritonrt::detail

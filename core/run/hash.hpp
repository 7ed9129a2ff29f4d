// FNV-1a, 64 bits: the fingerprints of training data and the parameter hash the data-parallel
// engine compares across ranks (a mismatch check, not cryptography).
#pragma once
#include <cstddef>
#include <cstdint>

namespace sp {

class Fnv1a {
 public:
  static constexpr std::uint64_t kOffsetBasis = 0xcbf29ce484222325ull;
  explicit Fnv1a(std::uint64_t basis = kOffsetBasis) : h_(basis) {}
  Fnv1a& add(const void* data, std::size_t bytes) {
    const auto* b = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) h_ = (h_ ^ b[i]) * 0x100000001b3ull;
    return *this;
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_;
};

}  // namespace sp

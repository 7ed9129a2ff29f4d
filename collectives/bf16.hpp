// bfloat16 stored as its 16 raw bits; arithmetic happens in float.
#pragma once
#include <bit>
#include <cstdint>

namespace sp::coll {

inline float bf16_to_float(std::uint16_t b) { return std::bit_cast<float>(std::uint32_t(b) << 16); }

// Round to nearest even; NaN stays NaN.
inline std::uint16_t float_to_bf16(float f) {
  std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return std::uint16_t((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return std::uint16_t(u >> 16);
}

}  // namespace sp::coll

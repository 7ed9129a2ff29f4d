#include "collectives/pattern.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>

#include "collectives/bf16.hpp"
#include "core/run/random.hpp"

namespace sp::coll {

// The verification pattern.
//
// Exactness. Every integer n with |n| <= E is exact in the dtype: E = 2^24 (f32), 2^53 (f64),
// 2^8 (bf16: 8 significant bits), 2^31 - 1 (i32). Inputs are integers in [-k, k], and at each
// element at most C ranks have a non-zero input. Whatever order and grouping an algorithm adds
// in, every partial sum is a sum of a subset of those inputs, so |partial sum| <= C k. With
// C k <= E every input, partial sum and result is exactly representable, every addition is exact,
// and all algorithms agree with the sequential reference bit for bit; max and min return one of
// the inputs, exact anyway. Up to E ranks C = R (every rank contributes) and k = E / R, capped
// at kMaxAmplitude. Beyond E ranks (bf16 past 256 ranks) the ranks fall into g = ceil(R / E)
// groups by rank mod g, and only the group picked by a hash of the element index is non-zero
// there: C = ceil(R / g) <= E and k = E / C >= 1. bf16 at 1, 2, 3, 5, 256, 1024 ranks:
// k = 256, 128, 85, 51, 1, 1 (the last with 4 groups of 256).
//
// No short periods. Values come from a 64-bit mix of (rank, index) (splitmix64's finaliser, a
// bijection), so no shift of a block by any count of elements, and no exchange of two ranks'
// data, preserves the data except by chance (about 1 in 2k + 1 per element). The previous
// pattern, (7 rank + 3 i) mod 17, repeated every 17 elements and every 17 ranks.
namespace {

constexpr std::int64_t kMaxAmplitude = 1000;

// h in [0, 2^64) -> [0, n) without a division (the top 32 bits scaled).
std::uint64_t scale_to(std::uint64_t h, std::uint64_t n) { return ((h >> 32) * n) >> 32; }

std::int64_t value_with(const PatternShape& sh, int rank, std::size_t i) {
  if (sh.groups > 1) {
    const auto group = scale_to(sp::mix64(i ^ 0x243f6a8885a308d3ull), std::uint64_t(sh.groups));
    if (std::uint64_t(rank) % std::uint64_t(sh.groups) != group) return 0;
  }
  const std::uint64_t h = sp::mix64(sp::mix64(std::uint64_t(rank) ^ 0x5ca1ab1e00000000ull) + i);
  return static_cast<std::int64_t>(scale_to(h, std::uint64_t(2 * sh.amplitude + 1))) - sh.amplitude;
}

void store(void* buf, std::size_t i, Dtype d, std::int64_t v) {
  switch (d) {
    case Dtype::f32:
      static_cast<float*>(buf)[i] = static_cast<float>(v);
      break;
    case Dtype::f64:
      static_cast<double*>(buf)[i] = static_cast<double>(v);
      break;
    case Dtype::i32:
      static_cast<std::int32_t*>(buf)[i] = static_cast<std::int32_t>(v);
      break;
    case Dtype::bf16:
      static_cast<std::uint16_t*>(buf)[i] = float_to_bf16(static_cast<float>(v));
      break;
  }
}

std::int64_t expected_with(const PatternShape& sh, std::size_t i, Op o, int nranks) {
  std::int64_t acc = value_with(sh, 0, i);
  for (int r = 1; r < nranks; ++r) {
    std::int64_t v = value_with(sh, r, i);
    acc = o == Op::sum ? acc + v : o == Op::max ? std::max(acc, v) : std::min(acc, v);
  }
  return acc;
}

}  // namespace

std::int64_t exact_integer_bound(Dtype d) {
  switch (d) {
    case Dtype::f32:
      return std::int64_t(1) << 24;
    case Dtype::f64:
      return std::int64_t(1) << 53;
    case Dtype::i32:
      return INT32_MAX;
    case Dtype::bf16:
      return std::int64_t(1) << 8;
  }
  return 1;
}

PatternShape pattern_shape(Dtype d, int nranks) {
  const std::int64_t e = exact_integer_bound(d), r = std::max(nranks, 1);
  PatternShape sh;
  sh.groups = static_cast<int>((r + e - 1) / e);
  const std::int64_t contributors = (r + sh.groups - 1) / sh.groups;
  sh.amplitude = std::min(kMaxAmplitude, e / contributors);
  return sh;
}

std::int64_t pattern_value(int rank, std::size_t i, Dtype d, int nranks) {
  return value_with(pattern_shape(d, nranks), rank, i);
}

std::int64_t expected_value(std::size_t i, Dtype d, Op o, int nranks) {
  return expected_with(pattern_shape(d, nranks), i, o, nranks);
}

void fill_pattern(void* buf, std::size_t count, Dtype d, int rank, int nranks, std::size_t first) {
  const PatternShape sh = pattern_shape(d, nranks);
  for (std::size_t i = 0; i < count; ++i) store(buf, i, d, value_with(sh, rank, first + i));
}

void fill_expected(void* buf, std::size_t count, Dtype d, Op o, int nranks, std::size_t first) {
  const PatternShape sh = pattern_shape(d, nranks);
  for (std::size_t i = 0; i < count; ++i) store(buf, i, d, expected_with(sh, first + i, o, nranks));
}

}  // namespace sp::coll

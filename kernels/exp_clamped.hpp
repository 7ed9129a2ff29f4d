// exp over a clamped range as a polynomial, for the per-ISA kernel files (kernels/variants.hpp):
// libmvec has no AVX-512 expf for a -march=x86-64-v3 build, and its call and range checks cost as
// much as the polynomial. Builtins only and internal linkage (static): each ISA's object gets its
// own copy, never a weak one the linker could share between variants (tests/unit/isa.sh).
#pragma once

#include <cstdint>

namespace sp::kernels::detail {

// log2(e), and ln 2 in two parts (Cody-Waite): the high part's product with n is exact to float.
// (Internal linkage, as the functions below.)
constexpr float kExpLog2e = 1.44269504f, kExpLn2High = 0.693145752f, kExpLn2Low = 1.42860677e-6f;

// exp(v) for |v| <= 80: v = n ln2 + r with n = round(v / ln2), |r| <= ln2 / 2 (ln2 in two parts,
// Cody-Waite, so r is exact to float), exp(r) by its Taylor polynomial to r^6 (truncation error
// 0.35^7 / 5040 ~ 1.3e-7, about one float ulp), times 2^n by adding n to the exponent field.
static inline float exp_clamped(float v) {
  const float n = __builtin_nearbyintf(v * kExpLog2e);
  const float r = __builtin_fmaf(n, -kExpLn2High, __builtin_fmaf(n, -kExpLn2Low, v));
  float p = 1.0f / 720.0f;
  p = __builtin_fmaf(p, r, 1.0f / 120.0f);
  p = __builtin_fmaf(p, r, 1.0f / 24.0f);
  p = __builtin_fmaf(p, r, 1.0f / 6.0f);
  p = __builtin_fmaf(p, r, 0.5f);
  p = __builtin_fmaf(p, r, 1.0f);
  p = __builtin_fmaf(p, r, 1.0f);
  const std::int32_t exponent = static_cast<std::int32_t>(n) * (1 << 23);
  return __builtin_bit_cast(float, __builtin_bit_cast(std::int32_t, p) + exponent);
}

// The same exp on the lanes of a GCC vector type (FloatVec of float, IntVec of int32 as wide), for
// loops the vectoriser would not take because of a select around the call. n is rounded half up
// (truncation of a positive value) instead of to even; r stays within ln2 / 2. In and out by
// reference: a vector wider than the object's ISA passed by value draws GCC's ABI warning.
template <class FloatVec, class IntVec>
static inline void exp_clamped_lanes(const FloatVec& v, FloatVec& e) {
  // v / ln2 >= -116 for v >= -80, so + 128.5 is positive and truncation rounds it.
  const IntVec n = __builtin_convertvector(v * kExpLog2e + 128.5f, IntVec) - 128;
  const FloatVec nf = __builtin_convertvector(n, FloatVec);
  const FloatVec r = nf * -kExpLn2High + (nf * -kExpLn2Low + v);
  FloatVec p = r * (1.0f / 720.0f) + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  e = (FloatVec)((IntVec)p + n * (1 << 23));
}

}  // namespace sp::kernels::detail

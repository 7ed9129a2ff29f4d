// The causal softmax of attention's score rows and its backward, compiled once per instruction-set variant
// (kernels/variants.hpp; softmax_v4.cpp with -march=x86-64-v4), with the polynomial exp of
// exp_clamped.hpp: under -ffast-math GCC otherwise calls libmvec's 8-lane expf, which measured
// slower here than glibc's scalar expf (gpt-tiny's attention forward 11.3 against 8.9 ms a step,
// Xeon family 6 model 207). Only builtins are called (tests/unit/isa.sh).
#include <cstddef>

#include "kernels/exp_clamped.hpp"
#include "kernels/variants.hpp"

#ifndef SP_KERNEL_VARIANT
#define SP_KERNEL_VARIANT baseline
#endif

namespace sp::kernels::detail::SP_KERNEL_VARIANT {

namespace {
// exp(-80) ~ 1.8e-35: an entry that far below its row's maximum is 0 to float precision anyway,
// and the clamp keeps 2^n a normal number.
constexpr float kExpFloor = -80.0f;
constexpr int kVectorFloats = 16;  // AVX-512's width, twice AVX2's

// Where row t's loops stop: whole vectors of 16 past t (a row is short, t + 1 entries, and a
// scalar remainder loop after the vector one took most of the time), but not past limit.
// A ternary rather than std::min: builtins only in the per-ISA objects.
inline int whole_vectors_past(int t, int limit) {
  const int n = (t + kVectorFloats) / kVectorFloats * kVectorFloats;
  return n < limit ? n : limit;
}
}  // namespace

void softmax_causal_rows(float* p, int T, int t_begin, int t_end) {
  for (int t = t_begin; t < t_end; t++) {
    float* row = p + (std::size_t)t * T;
    // The masked entries up to n are selected out.
    const int n = whole_vectors_past(t, T);
    // Max subtracted for a stable exp; every value is finite (no -INFINITY start for max).
    float maxval = row[0];
#pragma omp simd reduction(max : maxval)
    for (int t2 = 0; t2 < n; t2++) {
      const float v = t2 <= t ? row[t2] : row[0];
      maxval = v > maxval ? v : maxval;
    }
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int t2 = 0; t2 < n; t2++) {
      const float e = t2 <= t ? exp_clamped(__builtin_fmaxf(row[t2] - maxval, kExpFloor)) : 0.0f;
      row[t2] = e;
      sum += e;
    }
    const float inv_sum = 1.0f / sum;
#pragma omp simd
    for (int t2 = 0; t2 < n; t2++) row[t2] *= inv_sum;
    for (int t2 = n; t2 < T; t2++) row[t2] = 0.0f;  // the masked (future) entries
  }
}

void softmax_causal_rows_backward(float* ds, const float* p, int T, int t_begin, int t_end, int keys, float scale) {
  for (int t = t_begin; t < t_end; t++) {
    const float* prow = p + (std::size_t)t * T;
    float* row = ds + (std::size_t)(t - t_begin) * T;
    // p is 0 at the masked entries up to n, so they add nothing to p_dp and come out 0.
    const int n = whole_vectors_past(t, keys);
    float p_dp = 0.0f;
#pragma omp simd reduction(+ : p_dp)
    for (int t2 = 0; t2 < n; t2++) p_dp += prow[t2] * row[t2];
#pragma omp simd
    for (int t2 = 0; t2 < n; t2++) row[t2] = prow[t2] * (row[t2] - p_dp) * scale;
    for (int t2 = n; t2 < keys; t2++) row[t2] = 0.0f;
  }
}

}  // namespace sp::kernels::detail::SP_KERNEL_VARIANT

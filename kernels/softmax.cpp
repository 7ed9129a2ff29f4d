// The causal softmax of attention's score rows and its backward, compiled once per instruction-set variant
// (kernels/variants.hpp; softmax_v4.cpp with -march=x86-64-v4), with the polynomial exp of
// exp_clamped.hpp: under -ffast-math GCC otherwise calls libmvec's 8-lane expf, which measured
// slower here than glibc's scalar expf (gpt-tiny's attention forward 11.3 against 8.9 ms a step,
// Xeon family 6 model 207). Only builtins are called (tests/unit/isa.sh).
#include <cstddef>
#include <cstdint>

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
// The forward's vector type: the object's own register width (16-float vectors on AVX2 came out
// 2.3x slower than 8-float ones).
#ifdef __AVX512F__
constexpr int kLanes = 16;
#else
constexpr int kLanes = 8;
#endif
typedef float FloatLanes __attribute__((vector_size(kLanes * sizeof(float))));
typedef std::int32_t IntLanes __attribute__((vector_size(kLanes * sizeof(std::int32_t))));

// Where row t's loops stop: whole vectors of 16 past t (a row is short, t + 1 entries, and a
// scalar remainder loop after the vector one took most of the time), but not past limit.
// A ternary rather than std::min: builtins only in the per-ISA objects.
inline int whole_vectors_past(int t, int limit) {
  const int n = (t + kVectorFloats) / kVectorFloats * kVectorFloats;
  return n < limit ? n : limit;
}
}  // namespace

void softmax_causal_rows(float* p, int T, int t_begin, int t_end) {
  // Whole rows of vectors, one partial per lane, the lanes reduced in a fixed order after the row:
  // a row is a few vectors long, and `omp simd reduction` over a trip count the compiler does not
  // know spent more in its prologue, epilogue and horizontal step than in the exp (a third of
  // gpt-tiny's attention forward, Xeon family 6 model 207). n is a multiple of 16 unless it is T;
  // a row that ends inside a vector takes its tail one by one.
  constexpr int W = kLanes;
  IntLanes lane = {};
  for (int j = 0; j < W; j++) lane[j] = j;
  for (int t = t_begin; t < t_end; t++) {
    float* row = p + (std::size_t)t * T;
    const int n = whole_vectors_past(t, T);
    const int whole = n / W * W;
    // Max subtracted for a stable exp; every value is finite (no -INFINITY start for max).
    FloatLanes vmax = row[0] + FloatLanes{};
    for (int c = 0; c < whole; c += W) {
      FloatLanes x;
      __builtin_memcpy(&x, row + c, sizeof x);
      vmax = lane + c <= t && x > vmax ? x : vmax;
    }
    float maxval = vmax[0];
    for (int j = 1; j < W; j++) maxval = vmax[j] > maxval ? vmax[j] : maxval;
    for (int t2 = whole; t2 < n && t2 <= t; t2++) maxval = row[t2] > maxval ? row[t2] : maxval;

    FloatLanes vsum = {};
    for (int c = 0; c < whole; c += W) {
      FloatLanes x;
      __builtin_memcpy(&x, row + c, sizeof x);
      const FloatLanes arg = x - maxval;
      FloatLanes e;
      exp_clamped_lanes<FloatLanes, IntLanes>(arg > kExpFloor ? arg : kExpFloor + FloatLanes{}, e);
      e = lane + c <= t ? e : FloatLanes{};  // 0 past t
      __builtin_memcpy(row + c, &e, sizeof e);
      vsum += e;
    }
    float tail_sum = 0.0f;
    for (int t2 = whole; t2 < n; t2++) {
      const float e = t2 <= t ? exp_clamped(__builtin_fmaxf(row[t2] - maxval, kExpFloor)) : 0.0f;
      row[t2] = e;
      tail_sum += e;
    }
    // Pairwise over the lanes, always in this order.
    float lanes[W];
    __builtin_memcpy(lanes, &vsum, sizeof lanes);
    for (int half = W / 2; half > 0; half /= 2) {
      for (int j = 0; j < half; j++) lanes[j] += lanes[j + half];
    }
    const float inv_sum = 1.0f / (lanes[0] + tail_sum);
    for (int c = 0; c < whole; c += W) {
      FloatLanes x;
      __builtin_memcpy(&x, row + c, sizeof x);
      x *= inv_sum;
      __builtin_memcpy(row + c, &x, sizeof x);
    }
    for (int t2 = whole; t2 < n; t2++) row[t2] *= inv_sum;
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

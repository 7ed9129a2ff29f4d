// Layer norm's per-row loops, compiled once per instruction-set variant (kernels/variants.hpp;
// layernorm_rows_v4.cpp with -march=x86-64-v4): with C = 256 a row is 16 AVX-512 vectors, and the
// loops are short enough that the vector width, not memory, sets their pace in gpt's step. The
// OpenMP loops over the rows, and the profile, stay in layernorm.cpp. `omp simd reduction`
// lets the row sums be vectorised (reordered), which stays independent of the thread count.
#include <cmath>
#include <cstddef>

#include "kernels/layers.hpp"
#include "kernels/variants.hpp"

#ifndef SP_KERNEL_VARIANT
#define SP_KERNEL_VARIANT baseline
#endif

namespace sp::kernels::detail::SP_KERNEL_VARIANT {

void layernorm_forward_rows(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                            const float* bias, int row_begin, int row_end, int C) {
  for (int n = row_begin; n < row_end; n++) {
    const float* x = inp + (std::size_t)n * C;
    float* y = out + (std::size_t)n * C;
    // Two passes (mean, then variance about the mean): stabler than E[x^2] - E[x]^2.
    float m = 0.0f;
#pragma omp simd reduction(+ : m)
    for (int c = 0; c < C; c++) m += x[c];
    m /= C;
    float var = 0.0f;
#pragma omp simd reduction(+ : var)
    for (int c = 0; c < C; c++) {
      const float d = x[c] - m;
      var += d * d;
    }
    var /= C;
    const float s = 1.0f / __builtin_sqrtf(var + kLayerNormEps);
#pragma omp simd
    for (int c = 0; c < C; c++) y[c] = (x[c] - m) * s * weight[c] + bias[c];
    mean[n] = m;
    rstd[n] = s;
  }
}

void layernorm_backward_rows(float* dinp, float* part_dw, float* part_db, const float* dout, const float* inp,
                             const float* weight, const float* mean, const float* rstd, int row_begin, int row_end,
                             int C) {
  // With norm = (x - mean) * rstd and dnorm = weight * dout:
  // dx = rstd * (dnorm - avg_c(dnorm) - norm * avg_c(dnorm * norm)); the rows' norm * dout and dout
  // go into the block's partial dweight and dbias in the same pass as dx.
  for (int n = row_begin; n < row_end; n++) {
    const float* x = inp + (std::size_t)n * C;
    const float* dy = dout + (std::size_t)n * C;
    const float m = mean[n];
    const float s = rstd[n];
    if (dinp == nullptr) {
#pragma omp simd
      for (int c = 0; c < C; c++) {
        part_dw[c] += (x[c] - m) * s * dy[c];
        part_db[c] += dy[c];
      }
      continue;
    }
    float* dx = dinp + (std::size_t)n * C;
    float dnorm_mean = 0.0f;
    float dnorm_norm_mean = 0.0f;
#pragma omp simd reduction(+ : dnorm_mean, dnorm_norm_mean)
    for (int c = 0; c < C; c++) {
      const float norm = (x[c] - m) * s;
      const float dnorm = weight[c] * dy[c];
      dnorm_mean += dnorm;
      dnorm_norm_mean += dnorm * norm;
    }
    dnorm_mean /= C;
    dnorm_norm_mean /= C;
    if (part_dw == nullptr) {
#pragma omp simd
      for (int c = 0; c < C; c++) {
        const float norm = (x[c] - m) * s;
        dx[c] += s * (weight[c] * dy[c] - dnorm_mean - norm * dnorm_norm_mean);
      }
      continue;
    }
#pragma omp simd
    for (int c = 0; c < C; c++) {
      const float norm = (x[c] - m) * s;
      dx[c] += s * (weight[c] * dy[c] - dnorm_mean - norm * dnorm_norm_mean);
      part_dw[c] += norm * dy[c];
      part_db[c] += dy[c];
    }
  }
}

}  // namespace sp::kernels::detail::SP_KERNEL_VARIANT

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "kernels/column_blocks.hpp"
#include "kernels/layers.hpp"
#include "kernels/profile.hpp"

namespace sp::kernels {

void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight, const float* bias,
                       int B, int T, int C) {
  const double rows = double(B) * T;
  profile::Scope scope("layernorm_forward", 8 * rows * C, 4 * (2 * rows * C + 2.0 * C + 2 * rows));
  const int N = B * T;
#pragma omp parallel for
  for (int n = 0; n < N; n++) {
    const float* x = inp + (size_t)n * C;
    // Two passes (mean, then variance about the mean): stabler than E[x^2] - E[x]^2.
    // (omp simd reduction: allows a vectorised, reordered float sum; still thread-independent.)
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
    const float s = 1.0f / std::sqrt(var + kLayerNormEps);
    float* y = out + (size_t)n * C;
    for (int c = 0; c < C; c++) y[c] = (x[c] - m) * s * weight[c] + bias[c];
    mean[n] = m;
    rstd[n] = s;
  }
}

void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                        const float* weight, const float* mean, const float* rstd, int B, int T, int C) {
  const double rows = double(B) * T;
  profile::Scope scope("layernorm_backward", 12 * rows * C, 4 * (4 * rows * C + 5.0 * C + 2 * rows));
  const int N = B * T;
  // Pass 1, parallel over rows: dinp. With norm = (x - mean) * rstd and dnorm = weight * dout,
  // dx = rstd * (dnorm - avg_c(dnorm) - norm * avg_c(dnorm * norm)).
  if (dinp != nullptr) {
#pragma omp parallel for
    for (int n = 0; n < N; n++) {
      const float* x = inp + (size_t)n * C;
      const float* dy = dout + (size_t)n * C;
      float* dx = dinp + (size_t)n * C;
      const float m = mean[n];
      const float s = rstd[n];
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
      for (int c = 0; c < C; c++) {
        const float norm = (x[c] - m) * s;
        const float dnorm = weight[c] * dy[c];
        dx[c] += s * (dnorm - dnorm_mean - norm * dnorm_norm_mean);
      }
    }
  }
  // Pass 2, parallel over blocks of channels (column_blocks.hpp): dweight and dbias sum over all rows.
  if (dweight == nullptr && dbias == nullptr) return;
  for_each_column_block(C, [&](int c0, int width) {
    float dw[kColumnBlock] = {};
    float db[kColumnBlock] = {};
    for (int n = 0; n < N; n++) {
      const float* x = inp + (size_t)n * C + c0;
      const float* dy = dout + (size_t)n * C + c0;
      const float m = mean[n];
      const float s = rstd[n];
      for (int j = 0; j < width; j++) {
        dw[j] += (x[j] - m) * s * dy[j];
        db[j] += dy[j];
      }
    }
    for (int j = 0; j < width; j++) {
      if (dweight != nullptr) dweight[c0 + j] += dw[j];
      if (dbias != nullptr) dbias[c0 + j] += db[j];
    }
  });
}

}  // namespace sp::kernels

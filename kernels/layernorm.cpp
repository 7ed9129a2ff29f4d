#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "kernels/column_blocks.hpp"
#include "kernels/layers.hpp"
#include "kernels/profile.hpp"

namespace sp::kernels {

namespace {

// One row: y = (x - mean) * rstd * weight + bias, mean and rstd returned.
void layernorm_row(float* y, float& mean, float& rstd, const float* x, const float* weight, const float* bias, int C) {
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
  for (int c = 0; c < C; c++) y[c] = (x[c] - m) * s * weight[c] + bias[c];
  mean = m;
  rstd = s;
}

}  // namespace

void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight, const float* bias,
                       int B, int T, int C) {
  const double rows = double(B) * T;
  profile::Scope scope("layernorm_forward", 8 * rows * C, 4 * (2 * rows * C + 2.0 * C + 2 * rows));
  const int N = B * T;
#pragma omp parallel for
  for (int n = 0; n < N; n++) {
    layernorm_row(out + (size_t)n * C, mean[n], rstd[n], inp + (size_t)n * C, weight, bias, C);
  }
}

void layernorm_residual_forward(float* out, float* mean, float* rstd, float* sum, const float* sum_bias,
                                const float* residual, const float* weight, const float* bias, int B, int T, int C) {
  const double rows = double(B) * T;
  profile::Scope scope("layernorm_forward", 10 * rows * C, 4 * (4 * rows * C + 3.0 * C + 2 * rows));
  const int N = B * T;
#pragma omp parallel for
  for (int n = 0; n < N; n++) {
    float* x = sum + (size_t)n * C;
    const float* r = residual + (size_t)n * C;
#pragma omp simd
    for (int c = 0; c < C; c++) x[c] = x[c] + (r[c] + sum_bias[c]);
    layernorm_row(out + (size_t)n * C, mean[n], rstd[n], x, weight, bias, C);
  }
}

void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                        const float* weight, const float* mean, const float* rstd, int B, int T, int C) {
  const double rows = double(B) * T;
  profile::Scope scope("layernorm_backward", 12 * rows * C, 4 * (3 * rows * C + 5.0 * C + 2 * rows));
  const int N = B * T;
  if (dinp == nullptr && dweight == nullptr && dbias == nullptr) return;
  // One pass over x and dout per row, in row blocks (column_blocks.hpp): with norm = (x - mean) *
  // rstd and dnorm = weight * dout, dx = rstd * (dnorm - avg_c(dnorm) - norm * avg_c(dnorm * norm)),
  // and each block's rows add norm * dout and dout into the block's own partial dweight and dbias.
  // (A second pass over every row for dweight and dbias read x and dout again from beyond L2.)
  const RowBlocks blocks(N);
  const bool param_grads = dweight != nullptr || dbias != nullptr;
  std::vector<float> partial(param_grads ? 2 * (size_t)blocks.count * C : 0, 0.0f);
#pragma omp parallel for
  for (int blk = 0; blk < blocks.count; blk++) {
    float* part_dw = param_grads ? partial.data() + 2 * (size_t)blk * C : nullptr;
    float* part_db = param_grads ? part_dw + C : nullptr;
    for (int n = blocks.begin(blk); n < blocks.end(blk); n++) {
      const float* x = inp + (size_t)n * C;
      const float* dy = dout + (size_t)n * C;
      const float m = mean[n];
      const float s = rstd[n];
      if (dinp != nullptr) {
        float* dx = dinp + (size_t)n * C;
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
#pragma omp simd
        for (int c = 0; c < C; c++) {
          const float norm = (x[c] - m) * s;
          const float dnorm = weight[c] * dy[c];
          dx[c] += s * (dnorm - dnorm_mean - norm * dnorm_norm_mean);
        }
      }
      if (param_grads) {
#pragma omp simd
        for (int c = 0; c < C; c++) {
          part_dw[c] += (x[c] - m) * s * dy[c];
          part_db[c] += dy[c];
        }
      }
    }
  }
  if (dweight != nullptr) add_block_partials(dweight, partial.data(), blocks.count, 2 * (size_t)C, C);
  if (dbias != nullptr) add_block_partials(dbias, partial.data() + C, blocks.count, 2 * (size_t)C, C);
}

}  // namespace sp::kernels

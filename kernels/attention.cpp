#include "kernels/attention.hpp"

#include <cassert>
#include <cmath>
#include <cstddef>
#include <vector>

#include "kernels/gemm.hpp"
#include "kernels/profile.hpp"

namespace sp::kernels {

// Per (batch row, head) the attention is three GEMMs over strided slices of qkv — scores Q·K^T,
// then P·V (forward); dP = dout·V^T, dV += P^T·dout, dQ += dS·K, dK += dS^T·Q (backward) — with
// the softmax and its backward between them. The GEMMs run over the whole T x T square (the
// masked half is zero): twice the causal triangle's arithmetic, at BLAS speed instead of a
// dot-product loop's (results/2026-11-26-vm-f26m2-kernel-profile: 14-18 GFLOP/s as loops).
// OpenBLAS runs single-threaded inside the parallel loop, so results do not depend on the thread
// count.

void attention_forward(float* out, float* att, const float* qkv, int B, int T, int C, int NH) {
  const double heads = double(B) * NH;
  profile::Scope scope("attention_forward", heads * (4.0 * T * T * (C / NH) + 4.0 * T * (T + 1) / 2),
                       4 * (4.0 * B * T * C + heads * T * T));
  assert(C % NH == 0);
  const int hs = C / NH;
  const int C3 = 3 * C;
  const float scale = 1.0f / std::sqrt((float)hs);

#pragma omp parallel for collapse(2)
  for (int b = 0; b < B; b++) {
    for (int h = 0; h < NH; h++) {
      const float* q = qkv + (size_t)b * T * C3 + (size_t)h * hs;
      const float* k = q + C;
      const float* v = q + 2 * (size_t)C;
      float* p = att + ((size_t)b * NH + h) * T * T;
      // Scores: p[t, t2] = scale * q[t] . k[t2]
      sgemm(false, true, T, T, hs, scale, q, C3, k, C3, 0.0f, p, T);
      // Softmax over t2 <= t (max subtracted for a stable exp); the masked (future) entries are 0.
      // Vector loops: this file is built with -ffast-math (kernels/CMakeLists.txt), under which
      // GCC calls glibc's vector expf; every value here is finite (no -INFINITY start for max).
      for (int t = 0; t < T; t++) {
        float* row = p + (size_t)t * T;
        float maxval = row[0];
#pragma omp simd reduction(max : maxval)
        for (int t2 = 0; t2 <= t; t2++) maxval = std::max(maxval, row[t2]);
        float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
        for (int t2 = 0; t2 <= t; t2++) {
          row[t2] = std::exp(row[t2] - maxval);
          sum += row[t2];
        }
        const float inv_sum = 1.0f / sum;
#pragma omp simd
        for (int t2 = 0; t2 <= t; t2++) row[t2] *= inv_sum;
        for (int t2 = t + 1; t2 < T; t2++) row[t2] = 0.0f;
      }
      // out[t] = sum_t2 p[t, t2] v[t2]
      float* o = out + (size_t)b * T * C + (size_t)h * hs;
      sgemm(false, false, T, hs, T, 1.0f, p, T, v, C3, 0.0f, o, C);
    }
  }
}

void attention_backward(float* dqkv, const float* dout, const float* qkv, const float* att,
                        int B, int T, int C, int NH, bool accumulate) {
  const double heads = double(B) * NH;
  profile::Scope scope("attention_backward", heads * (8.0 * T * T * (C / NH) + 4.0 * T * T),
                       4 * (4.0 * B * T * C + heads * T * T + 6.0 * B * T * C));
  assert(C % NH == 0);
  const int hs = C / NH;
  const int C3 = 3 * C;
  const float scale = 1.0f / std::sqrt((float)hs);
  const float beta = accumulate ? 1.0f : 0.0f;  // each GEMM writes its (b, h) slice once

#pragma omp parallel
  {
    std::vector<float> ds((size_t)T * T);  // per-thread scratch: d loss / d p, then d loss / d score
#pragma omp for collapse(2)
    for (int b = 0; b < B; b++) {
      for (int h = 0; h < NH; h++) {
        const size_t at = (size_t)b * T * C3 + (size_t)h * hs;
        const float *q = qkv + at, *k = q + C, *v = q + 2 * (size_t)C;
        float *dq = dqkv + at, *dk = dq + C, *dv = dq + 2 * (size_t)C;
        const float* p = att + ((size_t)b * NH + h) * T * T;
        const float* d = dout + (size_t)b * T * C + (size_t)h * hs;
        // out = p · v:  dp = dout · v^T,  dv (+)= p^T · dout
        sgemm(false, true, T, T, hs, 1.0f, d, C, v, C3, 0.0f, ds.data(), T);
        sgemm(true, false, T, hs, T, 1.0f, p, T, d, C, beta, dv, C3);
        // Softmax backward, row by row: dscore[t2] = p[t2] (dp[t2] - sum_j p[j] dp[j]) * scale
        // (zero where p is: the masked entries).
        for (int t = 0; t < T; t++) {
          const float* prow = p + (size_t)t * T;
          float* row = ds.data() + (size_t)t * T;
          float p_dp = 0.0f;
#pragma omp simd reduction(+ : p_dp)
          for (int t2 = 0; t2 <= t; t2++) p_dp += prow[t2] * row[t2];
#pragma omp simd
          for (int t2 = 0; t2 <= t; t2++) row[t2] = prow[t2] * (row[t2] - p_dp) * scale;
          for (int t2 = t + 1; t2 < T; t2++) row[t2] = 0.0f;
        }
        // score = q · k^T:  dq (+)= dscore · k,  dk (+)= dscore^T · q
        sgemm(false, false, T, hs, T, 1.0f, ds.data(), T, k, C3, beta, dq, C3);
        sgemm(true, false, T, hs, T, 1.0f, ds.data(), T, q, C3, beta, dk, C3);
      }
    }
  }
}

}  // namespace sp::kernels

#include "kernels/attention.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <vector>

#include "kernels/column_blocks.hpp"
#include "kernels/gemm.hpp"
#include "kernels/profile.hpp"
#include "kernels/variants.hpp"

namespace sp::kernels {

// Per (batch row, head) the attention is GEMMs over strided slices of qkv — scores Q·K^T, then P·V
// (forward); dP = dout·V^T, dV += P^T·dout, dQ += dS·K, dK += dS^T·Q (backward) — with the softmax
// and its backward between them. The queries go in blocks of row_block rows and block i's GEMMs
// stop at its last key, (i + 1) * row_block: the causal mask leaves the rest zero. At T = 128 and
// 64-row blocks that is 3/4 of the whole square's arithmetic, at BLAS speed instead of a
// dot-product loop's (results/2026-11-26-vm-f26m2-kernel-profile: 14-18 GFLOP/s as loops).
// OpenBLAS and oneDNN run single-threaded inside the parallel loop, so results do not depend on the
// thread count.

namespace {

// The arithmetic of one (b, h) when block i spans keys [0, (i + 1) * row_block): the sum over
// the blocks of rows x keys, times the GEMMs' 2 * hs per entry.
double causal_block_entries(int T, int row_block) {
  double entries = 0;
  for (int r0 = 0; r0 < T; r0 += row_block) {
    const int rows = std::min(row_block, T - r0);
    entries += double(rows) * (r0 + rows);
  }
  return entries;
}

}  // namespace

void attention_forward(float* out, float* att, float* qkv, const float* qkv_bias, int B, int T, int C, int NH,
                       int row_block) {
  assert(C % NH == 0 && row_block > 0);
  const double heads = double(B) * NH;
  const int hs = C / NH;
  const double entries = causal_block_entries(T, row_block);
  profile::Scope scope("attention_forward", heads * (4.0 * entries * hs + 4.0 * T * (T + 1) / 2),
                       4 * (4.0 * B * T * C + heads * T * T));
  const int C3 = 3 * C;
  const float scale = 1.0f / std::sqrt((float)hs);

#pragma omp parallel for collapse(2)
  for (int b = 0; b < B; b++) {
    for (int h = 0; h < NH; h++) {
      float* q = qkv + (size_t)b * T * C3 + (size_t)h * hs;
      const float* k = q + C;
      const float* v = q + 2 * (size_t)C;
      float* p = att + ((size_t)b * NH + h) * T * T;
      float* o = out + (size_t)b * T * C + (size_t)h * hs;
      if (qkv_bias != nullptr) {
        // This (b, h)'s hs channels of q, k and v at every position: no other iteration's.
        for (int t = 0; t < T; t++) {
          for (int part = 0; part < 3; part++) {
            float* x = q + (size_t)t * C3 + (size_t)part * C;
            const float* bias = qkv_bias + (size_t)part * C + (size_t)h * hs;
#pragma omp simd
            for (int i = 0; i < hs; i++) x[i] += bias[i];
          }
        }
      }
      for (int r0 = 0; r0 < T; r0 += row_block) {
        const int rows = std::min(row_block, T - r0), keys = r0 + rows;
        float* pb = p + (size_t)r0 * T;
        // Scores: p[t, t2] = scale * q[t] . k[t2] for the block's rows t and keys t2 < keys
        sgemm(false, true, rows, keys, hs, scale, q + (size_t)r0 * C3, C3, k, C3, 0.0f, pb, T, GemmUse::attention);
        // Softmax over t2 <= t; the masked (future) entries are 0 (per ISA variant: variants.hpp).
        detail::softmax_causal_rows(p, T, r0, r0 + rows);
        // out[t] = sum_{t2 < keys} p[t, t2] v[t2]
        sgemm(false, false, rows, hs, keys, 1.0f, pb, T, v, C3, 0.0f, o + (size_t)r0 * C, C, GemmUse::attention);
      }
    }
  }
}

void attention_backward(float* dqkv, float* dqkv_bias, const float* dout, const float* qkv, const float* att, int B,
                        int T, int C, int NH, bool accumulate, int row_block) {
  assert(C % NH == 0 && row_block > 0);
  const double heads = double(B) * NH;
  const int hs = C / NH;
  const double entries = causal_block_entries(T, row_block);
  profile::Scope scope("attention_backward", heads * (8.0 * entries * hs + 4.0 * T * T),
                       4 * (4.0 * B * T * C + heads * T * T + 6.0 * B * T * C));
  const int C3 = 3 * C;
  const float scale = 1.0f / std::sqrt((float)hs);
  const int last_block = (T - 1) / row_block * row_block;
  // The bias gradient's sums over t, one row of 3C per batch row (each (b, h) fills its own
  // channels), added in b order afterwards: independent of the thread count.
  std::vector<float> bias_partial(dqkv_bias != nullptr ? (size_t)B * C3 : 0);

#pragma omp parallel
  {
    std::vector<float> ds((size_t)row_block * T);  // per-thread scratch: d loss / d p, then d loss / d score
#pragma omp for collapse(2)
    for (int b = 0; b < B; b++) {
      for (int h = 0; h < NH; h++) {
        const size_t at = (size_t)b * T * C3 + (size_t)h * hs;
        const float *q = qkv + at, *k = q + C, *v = q + 2 * (size_t)C;
        float *dq = dqkv + at, *dk = dq + C, *dv = dq + 2 * (size_t)C;
        const float* p = att + ((size_t)b * NH + h) * T * T;
        const float* d = dout + (size_t)b * T * C + (size_t)h * hs;
        // The last block first: its keys are all of them, so its dk and dv GEMMs write (or
        // accumulate into) every row once; the blocks before add to their leading rows.
        for (int r0 = last_block; r0 >= 0; r0 -= row_block) {
          const int rows = std::min(row_block, T - r0), keys = r0 + rows;
          const float beta_kv = r0 == last_block && !accumulate ? 0.0f : 1.0f;
          const float beta_q = accumulate ? 1.0f : 0.0f;  // dq's rows belong to this block alone
          const float* pb = p + (size_t)r0 * T;
          const float* db = d + (size_t)r0 * C;
          // out = p · v:  dp = dout · v^T,  dv (+)= p^T · dout
          sgemm(false, true, rows, keys, hs, 1.0f, db, C, v, C3, 0.0f, ds.data(), T, GemmUse::attention);
          sgemm(true, false, keys, hs, rows, 1.0f, pb, T, db, C, beta_kv, dv, C3, GemmUse::attention);
          // Softmax backward, row by row: dscore[t2] = p[t2] (dp[t2] - sum_j p[j] dp[j]) * scale
          // (zero where p is: the masked entries; per ISA variant: variants.hpp).
          detail::softmax_causal_rows_backward(ds.data(), p, T, r0, r0 + rows, keys, scale);
          // score = q · k^T:  dq (+)= dscore · k,  dk (+)= dscore^T · q
          sgemm(false, false, rows, hs, keys, 1.0f, ds.data(), T, k, C3, beta_q, dq + (size_t)r0 * C3, C3,
                GemmUse::attention);
          sgemm(true, false, keys, hs, rows, 1.0f, ds.data(), T, q + (size_t)r0 * C3, C3, beta_kv, dk, C3,
                GemmUse::attention);
        }
        if (dqkv_bias != nullptr) {
          // This (b, h)'s dq, dk and dv are final and still in cache: their sums over t.
          for (int part = 0; part < 3; part++) {
            float* sums = bias_partial.data() + (size_t)b * C3 + (size_t)part * C + (size_t)h * hs;
            for (int i = 0; i < hs; i++) sums[i] = 0.0f;
            for (int t = 0; t < T; t++) {
              const float* row = dq + (size_t)t * C3 + (size_t)part * C;
#pragma omp simd
              for (int i = 0; i < hs; i++) sums[i] += row[i];
            }
          }
        }
      }
    }
  }
  if (dqkv_bias != nullptr) add_block_partials(dqkv_bias, bias_partial.data(), B, (size_t)C3, C3);
}

}  // namespace sp::kernels

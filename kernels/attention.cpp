#include "kernels/attention.hpp"

#include <cassert>
#include <cmath>
#include <cstddef>
#include <vector>
#include "kernels/profile.hpp"

namespace sp::kernels {

void attention_forward(float* out, float* att, const float* qkv, int B, int T, int C, int NH) {
  // Causal: T(T+1)/2 scores per head, each a dot product of C/NH and a weighted sum of as many.
  const double pairs = double(B) * NH * T * (T + 1) / 2;
  profile::Scope scope("attention_forward", pairs * (4.0 * C / NH + 3), 4 * (4.0 * B * T * C + double(B) * NH * T * T));
  assert(C % NH == 0);
  const int hs = C / NH;
  const size_t C3 = 3 * (size_t)C;
  const float scale = 1.0f / std::sqrt((float)hs);

#pragma omp parallel for collapse(2)
  for (int b = 0; b < B; b++) {
    for (int h = 0; h < NH; h++) {
      const float* qkv_b = qkv + (size_t)b * T * C3;
      for (int t = 0; t < T; t++) {
        const float* q = qkv_b + t * C3 + (size_t)h * hs;
        float* att_row = att + (((size_t)b * NH + h) * T + t) * T;

        // Scores q . k / sqrt(hs) for t2 <= t, kept in att_row, and their max for a stable exp.
        float maxval = -INFINITY;
        for (int t2 = 0; t2 <= t; t2++) {
          const float* k = qkv_b + t2 * C3 + C + (size_t)h * hs;
          float dot = 0.0f;
#pragma omp simd reduction(+ : dot)  // lets the compiler vectorise (reorder) the float sum
          for (int i = 0; i < hs; i++) dot += q[i] * k[i];
          dot *= scale;
          att_row[t2] = dot;
          if (dot > maxval) maxval = dot;
        }
        // Softmax over t2 <= t; the masked (future) entries are exactly zero.
        float sum = 0.0f;
        for (int t2 = 0; t2 <= t; t2++) {
          const float e = std::exp(att_row[t2] - maxval);
          att_row[t2] = e;
          sum += e;
        }
        const float inv_sum = 1.0f / sum;
        for (int t2 = 0; t2 <= t; t2++) att_row[t2] *= inv_sum;
        for (int t2 = t + 1; t2 < T; t2++) att_row[t2] = 0.0f;

        // out = att_row · V
        float* out_t = out + ((size_t)b * T + t) * C + (size_t)h * hs;
        for (int i = 0; i < hs; i++) out_t[i] = 0.0f;
        for (int t2 = 0; t2 <= t; t2++) {
          const float* v = qkv_b + t2 * C3 + 2 * (size_t)C + (size_t)h * hs;
          const float a = att_row[t2];
#pragma omp simd
          for (int i = 0; i < hs; i++) out_t[i] += a * v[i];
        }
      }
    }
  }
}

void attention_backward(float* dqkv, const float* dout, const float* qkv, const float* att,
                        int B, int T, int C, int NH) {
  const double pairs = double(B) * NH * T * (T + 1) / 2;
  profile::Scope scope("attention_backward", pairs * (8.0 * C / NH + 4),
                       4 * (B * double(T) * C + 3.0 * B * T * C + double(B) * NH * T * T + 6.0 * B * T * C));
  assert(C % NH == 0);
  const int hs = C / NH;
  const size_t C3 = 3 * (size_t)C;
  const float scale = 1.0f / std::sqrt((float)hs);

#pragma omp parallel
  {
    std::vector<float> datt(T);  // per-thread scratch: d loss / d att[b,h,t,:]
#pragma omp for collapse(2)
    for (int b = 0; b < B; b++) {
      for (int h = 0; h < NH; h++) {
        const float* qkv_b = qkv + (size_t)b * T * C3;
        float* dqkv_b = dqkv + (size_t)b * T * C3;
        for (int t = 0; t < T; t++) {
          const float* att_row = att + (((size_t)b * NH + h) * T + t) * T;
          const float* dout_t = dout + ((size_t)b * T + t) * C + (size_t)h * hs;
          const float* q = qkv_b + t * C3 + (size_t)h * hs;
          float* dq = dqkv_b + t * C3 + (size_t)h * hs;

          // out_t = sum_t2 att[t2] v[t2]:  datt[t2] = dout_t . v[t2],  dv[t2] += att[t2] dout_t
          float att_datt = 0.0f;  // sum_t2 att[t2] * datt[t2], needed by the softmax backward
          for (int t2 = 0; t2 <= t; t2++) {
            const float* v = qkv_b + t2 * C3 + 2 * (size_t)C + (size_t)h * hs;
            float* dv = dqkv_b + t2 * C3 + 2 * (size_t)C + (size_t)h * hs;
            float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
            for (int i = 0; i < hs; i++) {
              dot += dout_t[i] * v[i];
              dv[i] += att_row[t2] * dout_t[i];
            }
            datt[t2] = dot;
            att_datt += att_row[t2] * dot;
          }
          // Softmax backward: dscore[t2] = att[t2] (datt[t2] - sum_j att[j] datt[j]); then
          // score = scale * q . k[t2] gives dq += scale dscore k[t2], dk[t2] += scale dscore q.
          for (int t2 = 0; t2 <= t; t2++) {
            const float dscore = att_row[t2] * (datt[t2] - att_datt) * scale;
            const float* k = qkv_b + t2 * C3 + C + (size_t)h * hs;
            float* dk = dqkv_b + t2 * C3 + C + (size_t)h * hs;
#pragma omp simd
            for (int i = 0; i < hs; i++) {
              dq[i] += dscore * k[i];
              dk[i] += dscore * q[i];
            }
          }
        }
      }
    }
  }
}

}  // namespace sp::kernels

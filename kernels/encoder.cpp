#include <cstddef>

#include "kernels/layers.hpp"
#include "kernels/profile.hpp"

namespace sp::kernels {

void encoder_forward(float* out, const int* tokens, const float* wte, const float* wpe, int B, int T, int C) {
  const double NC = double(B) * T * C;
  profile::Scope scope("encoder_forward", NC, 12 * NC);
#pragma omp parallel for collapse(2)
  for (int b = 0; b < B; b++) {
    for (int t = 0; t < T; t++) {
      const size_t bt = (size_t)b * T + t;
      float* out_bt = out + bt * C;
      const float* wte_row = wte + (size_t)tokens[bt] * C;
      const float* wpe_row = wpe + (size_t)t * C;
      for (int c = 0; c < C; c++) out_bt[c] = wte_row[c] + wpe_row[c];
    }
  }
}

void encoder_backward(float* dwte, float* dwpe, const float* dout, const int* tokens, int B, int T, int C) {
  const double NC = double(B) * T * C;
  profile::Scope scope("encoder_backward", 2 * NC, 20 * NC);
  // Serial on purpose: positions that share a token write the same dwte row, and this pass is
  // O(B*T*C), negligible next to the matmuls. A serial loop is race-free and deterministic.
  for (int b = 0; b < B; b++) {
    for (int t = 0; t < T; t++) {
      const size_t bt = (size_t)b * T + t;
      const float* dout_bt = dout + bt * C;
      float* dwte_row = dwte + (size_t)tokens[bt] * C;
      float* dwpe_row = dwpe + (size_t)t * C;
      for (int c = 0; c < C; c++) {
        dwte_row[c] += dout_bt[c];
        dwpe_row[c] += dout_bt[c];
      }
    }
  }
}

}  // namespace sp::kernels

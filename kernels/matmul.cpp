#include "kernels/matmul.hpp"

#include <algorithm>
#include <cstddef>

#include "kernels/column_blocks.hpp"
#include "kernels/gemm.hpp"
#include "kernels/profile.hpp"

namespace sp::kernels {

void matmul_forward(float* out, const float* inp, const float* weight, const float* bias,
                    int B, int T, int C, int OC) {
  const double rows = double(B) * T;
  profile::Scope scope("matmul_forward", 2 * rows * C * OC + (bias ? rows * OC : 0), 4 * (rows * C + double(OC) * C + rows * OC));
  const int N = B * T;
  // With a bias, pre-fill every row of out with it and let the GEMM add to it (beta = 1):
  // one pass over out instead of a second one after the GEMM.
  float beta = 0.0f;
  if (bias != nullptr) {
#pragma omp parallel for
    for (int n = 0; n < N; n++) {
      float* out_row = out + (size_t)n * OC;
      for (int o = 0; o < OC; o++) out_row[o] = bias[o];
    }
    beta = 1.0f;
  }
  // out[N, OC] = inp[N, C] · weight[OC, C]^T  (+ out when beta = 1)
  sgemm(false, true, N, OC, C, 1.0f, inp, C, weight, C, beta, out, OC);
}

void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                     const float* inp, const float* weight, int B, int T, int C, int OC,
                     bool accumulate_dinp) {
  const double NT = double(B) * T;
  profile::Scope scope("matmul_backward", (dinp ? 4 : 2) * NT * C * OC + (dbias ? NT * OC : 0),
                       4 * (NT * OC + NT * C + 2.0 * OC * C + (dinp ? double(OC) * C + 2 * NT * C : 0)));
  const int N = B * T;
  if (dinp != nullptr) {
    // dinp[N, C] (+)= dout[N, OC] · weight[OC, C]
    sgemm(false, false, N, C, OC, 1.0f, dout, OC, weight, C, accumulate_dinp ? 1.0f : 0.0f, dinp, C);
  }
  // dweight[OC, C] += dout[N, OC]^T · inp[N, C]
  sgemm(true, false, OC, C, N, 1.0f, dout, OC, inp, C, 1.0f, dweight, C);

  if (dbias != nullptr) {
    // Column sums of dout (column_blocks.hpp: thread-count-independent order).
    for_each_column_block(OC, [&](int o0, int width) {
      float acc[kColumnBlock] = {};
      for (int n = 0; n < N; n++) {
        const float* dout_row = dout + (size_t)n * OC + o0;
        for (int j = 0; j < width; j++) acc[j] += dout_row[j];
      }
      for (int j = 0; j < width; j++) dbias[o0 + j] += acc[j];
    });
  }
}

}  // namespace sp::kernels

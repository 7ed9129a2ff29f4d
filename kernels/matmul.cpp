#include "kernels/matmul.hpp"

#include <algorithm>
#include <cstddef>

#include "kernels/column_blocks.hpp"
#include "kernels/gemm.hpp"
#include "kernels/profile.hpp"

namespace sp::kernels {

namespace {

// out = inp · weight^T + (each row of out pre-filled with bias + the residual's row, when given):
// the GEMM adds to the pre-filled rows (beta = 1), one pass over out instead of one more after it.
void linear_forward(float* out, const float* inp, const float* weight, const float* bias, const float* residual, int N,
                    int C, int OC) {
  float beta = 0.0f;
  if (bias != nullptr || residual != nullptr) {
#pragma omp parallel for
    for (int n = 0; n < N; n++) {
      float* out_row = out + (size_t)n * OC;
      const float* res_row = residual ? residual + (size_t)n * OC : nullptr;
      if (bias && res_row) {
        for (int o = 0; o < OC; o++) out_row[o] = res_row[o] + bias[o];
      } else if (bias) {
        for (int o = 0; o < OC; o++) out_row[o] = bias[o];
      } else {
        for (int o = 0; o < OC; o++) out_row[o] = res_row[o];
      }
    }
    beta = 1.0f;
  }
  // out[N, OC] = inp[N, C] · weight[OC, C]^T  (+ out when beta = 1)
  sgemm(false, true, N, OC, C, 1.0f, inp, C, weight, C, beta, out, OC);
}

}  // namespace

void matmul_forward(float* out, const float* inp, const float* weight, const float* bias, int B, int T, int C, int OC) {
  const double rows = double(B) * T;
  profile::Scope scope("matmul_forward", 2 * rows * C * OC + (bias ? rows * OC : 0),
                       4 * (rows * C + double(OC) * C + rows * OC));
  linear_forward(out, inp, weight, bias, nullptr, B * T, C, OC);
}

void matmul_residual_forward(float* out, const float* inp, const float* weight, const float* bias,
                             const float* residual, int B, int T, int C, int OC) {
  const double rows = double(B) * T;
  profile::Scope scope("matmul_forward", 2 * rows * C * OC + (bias ? 2 : 1) * rows * OC,
                       4 * (rows * C + double(OC) * C + 2 * rows * OC));
  linear_forward(out, inp, weight, bias, residual, B * T, C, OC);
}

void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int B, int T, int C, int OC, bool accumulate_dinp) {
  const double NT = double(B) * T;
  profile::Scope scope("matmul_backward", (dinp ? 4 : 2) * NT * C * OC + (dbias ? NT * OC : 0),
                       4 * (NT * OC + NT * C + 2.0 * OC * C + (dinp ? double(OC) * C + 2 * NT * C : 0)));
  const int N = B * T;
  if (dinp != nullptr) {
    // dinp[N, C] (+)= dout[N, OC] · weight[OC, C]
    sgemm(false, false, N, C, OC, 1.0f, dout, OC, weight, C, accumulate_dinp ? 1.0f : 0.0f, dinp, C);
  }
  // dweight[OC, C] += dout[N, OC]^T · inp[N, C], at most kWeightGradientRows rows per GEMM
  // (results/2026-11-30-vm-f6m207-gpt-passes: gpt-tiny's step, oneDNN, Xeon family 6 model 207).
  for (int r0 = 0; r0 < N; r0 += kWeightGradientRows) {
    const int rows = std::min(kWeightGradientRows, N - r0);
    sgemm(true, false, OC, C, rows, 1.0f, dout + (size_t)r0 * OC, OC, inp + (size_t)r0 * C, C, 1.0f, dweight, C);
  }

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

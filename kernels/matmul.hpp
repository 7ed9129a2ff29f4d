// Linear layer (nn.Linear): out = inp · weight^T + bias, computed with sgemm (gemm.hpp:
// oneDNN or OpenBLAS); only the bias broadcast and the bias-gradient column sum are written here.
#pragma once

namespace sp::kernels {

// out:    [B*T, OC]  (written, not accumulated)
// inp:    [B*T, C]
// weight: [OC, C]    (PyTorch nn.Linear layout: one row per output channel)
// bias:   [OC] or nullptr (no bias)
// out[n, o] = bias[o] + sum_c inp[n, c] * weight[o, c]
void matmul_forward(float* out, const float* inp, const float* weight, const float* bias, int B, int T, int C, int OC);
// The same layer with the residual add of a transformer block folded in (its own pass saved):
// out[n, o] = residual[n, o] + bias[o] + sum_c inp[n, c] * weight[o, c]   residual: [B*T, OC]
// (out must not alias inp; it may alias residual).
void matmul_residual_forward(float* out, const float* inp, const float* weight, const float* bias,
                             const float* residual, int B, int T, int C, int OC);

// Gradients ACCUMULATE (llm.c convention), dinp unless accumulate_dinp is false (then written:
// a caller that would otherwise zero it first saves the pass over memory):
//   dinp    [B*T, C]  += dout · weight            (skipped when dinp == nullptr, e.g. first layer)
//   dweight [OC, C]   += dout^T · inp             (required)
//   dbias   [OC]      += column sums of dout      (skipped when dbias == nullptr: no bias)
// dout: [B*T, OC]; inp and weight as in matmul_forward. dweight's sum over the rows goes in
// blocks of kWeightGradientRows, one GEMM each (the block count, and so the rounding, depends on
// B*T alone): gpt-tiny's K = 1024 weight gradients ran slower whole than in two halves.
inline constexpr int kWeightGradientRows = 512;
void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int B, int T, int C, int OC, bool accumulate_dinp = true);

}  // namespace sp::kernels

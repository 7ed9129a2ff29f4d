// Per-position layers of the GPT block: token + position embedding (encoder), layernorm, GELU
// and the residual add. Backward functions ACCUMULATE into their gradients (see kernels.hpp).
#pragma once

#include <cstddef>

namespace sp::kernels {

// ---- encoder: token + position embedding ----
// out: [B, T, C]   tokens: [B, T], each in [0, V)   wte: [V, C]   wpe: [maxT, C] with maxT >= T
// out[b, t, :] = wte[tokens[b, t], :] + wpe[t, :]
void encoder_forward(float* out, const int* tokens, const float* wte, const float* wpe, int B, int T, int C);
// dwte [V, C] += dout scattered by token (a token seen twice gets both rows); dwpe [maxT, C]
// rows 0..T-1 += dout summed over the batch.   dout: [B, T, C]
void encoder_backward(float* dwte, float* dwpe, const float* dout, const int* tokens, int B, int T, int C);

// ---- layernorm over the last dimension C ----
inline constexpr float kLayerNormEps = 1e-5f;
// out, inp: [B, T, C]   weight, bias: [C]   mean, rstd: [B, T] (written, saved for backward)
// mean = avg_c inp;  rstd = 1 / sqrt(avg_c (inp - mean)^2 + 1e-5)   (biased variance)
// out = (inp - mean) * rstd * weight + bias
void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight, const float* bias,
                       int B, int T, int C);
// The same after a linear layer's residual add, in one pass per row (the add's pass before the
// GEMM otherwise writes the whole sum once more): sum [B, T, C] is the linear layer's output
// without its bias, and becomes the block's residual stream in place,
// sum = sum + (residual + sum_bias)   (sum_bias: [C], per channel),
// which is then normalised into out as by layernorm_forward (bit for bit the same as that sum
// followed by layernorm_forward).
void layernorm_residual_forward(float* out, float* mean, float* rstd, float* sum, const float* sum_bias,
                                const float* residual, const float* weight, const float* bias, int B, int T, int C);
// dinp [B, T, C] += ...,  dweight [C] += ...,  dbias [C] += ...   (any of the three may be
// nullptr to skip it). dout, inp: [B, T, C]; weight: [C]; mean, rstd from layernorm_forward.
void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                        const float* weight, const float* mean, const float* rstd, int B, int T, int C);

// ---- GELU, tanh approximation (as in GPT-2) ----
// out, inp: [N]   out = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))   out may alias inp.
void gelu_forward(float* out, const float* inp, size_t N);
// After a linear layer without its bias, in one pass: with h = inp + bias [columns] per row,
// out = GELU(h) (bit for bit the add followed by gelu_forward) and inp [rows, columns] is
// overwritten with GELU's slope gelu'(h), all the backward needs: it then multiplies, with no exp
// to evaluate again. out must not alias inp.
void gelu_bias_forward(float* out, float* inp, const float* bias, size_t rows, int columns);
// dinp [N] += gelu'(inp) * dout (= when accumulate is false).   inp, dout: [N]
void gelu_backward(float* dinp, const float* inp, const float* dout, size_t N, bool accumulate = true);
// The backward of gelu_bias_forward: dinp [rows, columns] = slope * dout (written), slope being
// what the forward left in its inp, and dbias [columns] += its column sums (the linear layer's bias
// gradient, taken in the same pass: column_blocks.hpp's row blocks, so the sums do not depend on
// the thread count). dinp may alias dout (in place).
void gelu_bias_backward(float* dinp, float* dbias, const float* slope, const float* dout, size_t rows, int columns);

// ---- residual add ----
// out, a, b: [N]   out = a + b   (out may alias a or b)
void residual_forward(float* out, const float* a, const float* b, size_t N);
// da [N] += dout,  db [N] += dout.   da and db may alias (then it gets 2 * dout).
// accumulate false: da = db = dout (copies; da and db must not alias).
void residual_backward(float* da, float* db, const float* dout, size_t N, bool accumulate = true);

}  // namespace sp::kernels

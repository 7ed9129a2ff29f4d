// Causal multi-head self-attention over a fused qkv tensor.
#pragma once

namespace sp::kernels {

// qkv: [B, T, 3C]  per position: q = qkv[b,t,0:C], k = qkv[b,t,C:2C], v = qkv[b,t,2C:3C];
//                  head h uses channels h*hs .. (h+1)*hs-1 of each, hs = C / NH (C % NH == 0).
// out: [B, T, C]   out[b,t,h*hs:(h+1)*hs] = sum_{t2<=t} att[b,h,t,t2] * v[b,t2,h]
// att: [B, NH, T, T] (written, saved for backward)
//      att[b,h,t,:] = softmax_{t2<=t}(q[b,t,h] . k[b,t2,h] / sqrt(hs)); entries t2 > t are 0.
// Parallel over B*NH, each (b, h) two GEMMs per block of row_block queries, up to the block's
// last key (attention.cpp): at T = 2 row_block, 3/4 of the whole T x T square's 4*B*C*T*T flop.
// row_block (> 0) changes the rounding, not the result; tests set it to cover several blocks.
// qkv_bias [3C], when given, is added to every position of qkv first, in place (the qkv GEMM's
// bias, for the backward's qkv too), each (b, h)'s slices just before its GEMMs read them: in
// cache then, where a pass before the GEMM wrote all of qkv once more.
inline constexpr int kAttentionRowBlock = 64;
void attention_forward(float* out, float* att, float* qkv, const float* qkv_bias, int B, int T, int C, int NH,
                       int row_block = kAttentionRowBlock);

// dqkv [B, T, 3C] += gradient w.r.t. qkv (dq, dk, dv in the same layout as qkv); written
// instead when accumulate is false. dqkv_bias [3C], when given, += dqkv's sums over every
// position as it stands afterwards (the qkv GEMM's bias gradient, taken while each (b, h)'s
// slices are in cache; summed per batch row, then in b order).
// dout: [B, T, C]; qkv and att as in/from attention_forward. Parallel over B*NH (each (b, h)
// owns its own channel slice of dqkv, so there are no races). Four GEMMs per block of queries,
// up to its last key: 8*B*C*T*T flop for the whole square, 3/4 of it at T = 2 row_block.
void attention_backward(float* dqkv, float* dqkv_bias, const float* dout, const float* qkv, const float* att, int B,
                        int T, int C, int NH, bool accumulate = true, int row_block = kAttentionRowBlock);

}  // namespace sp::kernels

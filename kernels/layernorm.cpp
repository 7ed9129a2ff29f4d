#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "kernels/column_blocks.hpp"
#include "kernels/layers.hpp"
#include "kernels/profile.hpp"
#include "kernels/variants.hpp"

namespace sp::kernels {

void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight, const float* bias,
                       int B, int T, int C) {
  const double rows = double(B) * T;
  profile::Scope scope("layernorm_forward", 8 * rows * C, 4 * (2 * rows * C + 2.0 * C + 2 * rows));
  const RowBlocks blocks(B * T);
#pragma omp parallel for
  for (int blk = 0; blk < blocks.count; blk++)
    detail::layernorm_forward_rows(out, mean, rstd, inp, weight, bias, blocks.begin(blk), blocks.end(blk), C);
}

void layernorm_residual_forward(float* out, float* mean, float* rstd, float* sum, const float* sum_bias,
                                const float* residual, const float* weight, const float* bias, int B, int T, int C) {
  const double rows = double(B) * T;
  profile::Scope scope("layernorm_forward", 10 * rows * C, 4 * (4 * rows * C + 3.0 * C + 2 * rows));
  const RowBlocks blocks(B * T);
#pragma omp parallel for
  for (int blk = 0; blk < blocks.count; blk++) {
    for (int n = blocks.begin(blk); n < blocks.end(blk); n++) {
      float* x = sum + (size_t)n * C;
      const float* r = residual + (size_t)n * C;
#pragma omp simd
      for (int c = 0; c < C; c++) x[c] = x[c] + (r[c] + sum_bias[c]);
    }
    detail::layernorm_forward_rows(out, mean, rstd, sum, weight, bias, blocks.begin(blk), blocks.end(blk), C);
  }
}

void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                        const float* weight, const float* mean, const float* rstd, int B, int T, int C) {
  const double rows = double(B) * T;
  profile::Scope scope("layernorm_backward", 12 * rows * C, 4 * (3 * rows * C + 5.0 * C + 2 * rows));
  const int N = B * T;
  if (dinp == nullptr && dweight == nullptr && dbias == nullptr) return;
  // In row blocks (column_blocks.hpp), each row once (layernorm_rows.cpp): dx, and each block's
  // rows add norm * dout and dout into the block's own partial dweight and dbias. (A second pass
  // over every row for dweight and dbias read x and dout again from beyond L2.)
  const RowBlocks blocks(N);
  const bool param_grads = dweight != nullptr || dbias != nullptr;
  std::vector<float> partial(param_grads ? 2 * (size_t)blocks.count * C : 0, 0.0f);
#pragma omp parallel for
  for (int blk = 0; blk < blocks.count; blk++) {
    float* part_dw = param_grads ? partial.data() + 2 * (size_t)blk * C : nullptr;
    float* part_db = param_grads ? part_dw + C : nullptr;
    detail::layernorm_backward_rows(dinp, part_dw, part_db, dout, inp, weight, mean, rstd, blocks.begin(blk),
                                    blocks.end(blk), C);
  }
  if (dweight != nullptr) add_block_partials(dweight, partial.data(), blocks.count, 2 * (size_t)C, C);
  if (dbias != nullptr) add_block_partials(dbias, partial.data() + C, blocks.count, 2 * (size_t)C, C);
}

}  // namespace sp::kernels

// GELU (its loops in gelu.cpp) and the residual add: elementwise over flat arrays.
#include <cstddef>
#include <vector>

#include "kernels/column_blocks.hpp"
#include "kernels/layers.hpp"
#include "kernels/profile.hpp"
#include "kernels/variants.hpp"

namespace sp::kernels {

// GELU's loops are in gelu.cpp, compiled per instruction-set variant (kernels/variants.hpp).
void gelu_forward(float* out, const float* inp, size_t N) {
  profile::Scope scope("gelu_forward", 9.0 * double(N), 8.0 * double(N));
  detail::gelu_forward(out, inp, N);
}

void gelu_bias_forward(float* out, float* inp, const float* bias, size_t rows, int columns) {
  const double N = double(rows) * columns;
  profile::Scope scope("gelu_forward", 16.0 * N, 12.0 * N + 4.0 * columns);
  detail::gelu_bias_forward(out, inp, bias, rows, static_cast<size_t>(columns));
}

void gelu_backward(float* dinp, const float* inp, const float* dout, size_t N, bool accumulate) {
  profile::Scope scope("gelu_backward", 16.0 * double(N), 16.0 * double(N));
  detail::gelu_backward(dinp, inp, dout, N, accumulate);
}

void gelu_bias_backward(float* dinp, float* dbias, const float* slope, const float* dout, size_t rows, int columns) {
  const double N = double(rows) * columns;
  profile::Scope scope("gelu_backward", 2.0 * N, 12.0 * N + 8.0 * columns);
  const RowBlocks blocks(static_cast<int>(rows));
  std::vector<float> partial((size_t)blocks.count * columns);
#pragma omp parallel for
  for (int blk = 0; blk < blocks.count; blk++) {
    const size_t at = (size_t)blocks.begin(blk) * columns;
    detail::gelu_backward_rows(dinp + at, partial.data() + (size_t)blk * columns, slope + at, dout + at,
                               static_cast<size_t>(blocks.end(blk) - blocks.begin(blk)), static_cast<size_t>(columns));
  }
  add_block_partials(dbias, partial.data(), blocks.count, static_cast<size_t>(columns), columns);
}

void residual_forward(float* out, const float* a, const float* b, size_t N) {
  profile::Scope scope("residual_forward", double(N), 12.0 * double(N));
#pragma omp parallel for
  for (size_t i = 0; i < N; i++) out[i] = a[i] + b[i];
}

void residual_backward(float* da, float* db, const float* dout, size_t N, bool accumulate) {
  profile::Scope scope("residual_backward", accumulate ? 2.0 * double(N) : 0.0, (accumulate ? 20.0 : 12.0) * double(N));
  if (!accumulate) {
#pragma omp parallel for simd
    for (size_t i = 0; i < N; i++) da[i] = db[i] = dout[i];
    return;
  }
#pragma omp parallel for
  for (size_t i = 0; i < N; i++) {
    da[i] += dout[i];
    db[i] += dout[i];
  }
}

}  // namespace sp::kernels

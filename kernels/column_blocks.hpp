// Sums over the rows of a [rows, columns] array, per column (matmul's dbias, layernorm's dweight
// and dbias), parallel over blocks of kColumnBlock columns. Each block is one OpenMP iteration's,
// walking every row with contiguous reads, so no two threads write the same column and the
// summation order does not depend on the thread count.
#pragma once

#include <algorithm>

namespace sp::kernels {

inline constexpr int kColumnBlock = 64;

// Calls block(c0, width) for columns [c0, c0 + width), width <= kColumnBlock, in parallel.
template <typename Block>
void for_each_column_block(int columns, const Block& block) {
  const int nblocks = (columns + kColumnBlock - 1) / kColumnBlock;
#pragma omp parallel for
  for (int blk = 0; blk < nblocks; blk++) {
    const int c0 = blk * kColumnBlock;
    block(c0, std::min(kColumnBlock, columns - c0));
  }
}

}  // namespace sp::kernels

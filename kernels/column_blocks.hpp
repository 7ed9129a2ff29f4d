// Sums over the rows of a [rows, columns] array, per column (matmul's dbias, layernorm's dweight
// and dbias), parallel over blocks of kColumnBlock columns. Each block is one OpenMP iteration's,
// walking every row with contiguous reads, so no two threads write the same column and the
// summation order does not depend on the thread count.
#pragma once

#include <algorithm>
#include <cstddef>

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

// Sums over the rows taken the other way round, for a kernel that walks rows anyway (layer norm's
// and GELU's backward): each block of rows adds into its own partial sums, and the partials are
// added in block order. At most kMaxRowBlocks blocks of at least kMinBlockRows rows: the layout,
// and so the rounding, depends on the row count alone, and the partials stay
// kMaxRowBlocks x columns floats.
struct RowBlocks {
  static constexpr int kMaxRowBlocks = 64, kMinBlockRows = 8;
  int rows, per_block, count;
  explicit RowBlocks(int rows_)
      : rows(rows_),
        per_block(std::max(kMinBlockRows, (rows_ + kMaxRowBlocks - 1) / kMaxRowBlocks)),
        count((rows_ + per_block - 1) / per_block) {}
  int begin(int blk) const { return blk * per_block; }
  int end(int blk) const { return std::min(rows, (blk + 1) * per_block); }
};

// out[c] += partial[0 * stride + c] + partial[1 * stride + c] + ... over `blocks`, in that order,
// for c < columns.
inline void add_block_partials(float* out, const float* partial, int blocks, std::size_t stride, int columns) {
  for_each_column_block(columns, [&](int c0, int width) {
    for (int blk = 0; blk < blocks; blk++) {
      const float* part = partial + blk * stride + c0;
      for (int j = 0; j < width; j++) out[c0 + j] += part[j];
    }
  });
}

}  // namespace sp::kernels

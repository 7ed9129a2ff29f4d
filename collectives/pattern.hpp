// The verification pattern every benchmark and test fills its buffers with: rank r's element i is
// pattern_value(r, i, ...), a small pseudo-random integer, so every reduction is exact in every
// dtype and the expected result is computed locally (collective.hpp's fill_input and
// fill_output_expected, the benchmark harness's checks: bench/harness.hpp).
#pragma once
#include <cstddef>
#include <cstdint>

#include "collectives/datatypes.hpp"

namespace sp::coll {

// The verification pattern (see pattern.cpp for why every sum is exact). Values depend on the
// dtype and rank count only through their range.
struct PatternShape {
  std::int64_t amplitude = 1;  // values lie in [-amplitude, amplitude]
  int groups = 1;              // at element i only the ranks of one group (rank mod groups) are non-zero
};
PatternShape pattern_shape(Dtype d, int nranks);
// Largest E such that every integer of magnitude <= E is exact in the dtype.
std::int64_t exact_integer_bound(Dtype d);
std::int64_t pattern_value(int rank, std::size_t i, Dtype d, int nranks);
std::int64_t expected_value(std::size_t i, Dtype d, Op o, int nranks);
// Elements first .. first + count - 1 of rank's pattern, and of the reduction of every rank's.
void fill_pattern(void* buf, std::size_t count, Dtype d, int rank, int nranks, std::size_t first = 0);
void fill_expected(void* buf, std::size_t count, Dtype d, Op o, int nranks, std::size_t first = 0);

}  // namespace sp::coll

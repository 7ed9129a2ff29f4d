// Statistics over samples and across ranks.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <span>
#include <vector>

namespace sp {

struct Summary {
  std::size_t n = 0;
  double min = 0, mean = 0, max = 0, median = 0, p99 = 0, stddev = 0;
};

// Linear-interpolated quantile q in [0,1] of already sorted values (empty -> 0).
double quantile_sorted(std::span<const double> sorted, double q);
Summary summarize(std::span<const double> values);

// One value per rank, seen from every rank: min/mean/max and which rank had the largest value.
struct RankSpread {
  double min = 0, mean = 0, max = 0;
  int slowest_rank = 0;  // rank holding max (lowest such rank on ties)
};
// counted = false: this rank's value is left out (at least one rank must count).
RankSpread spread_across_ranks(double local, MPI_Comm comm, bool counted = true);
// The mean of one value per rank, on every rank, through MPI_Allreduce (the library's summation
// order: not always bitwise the mean spread_across_ranks sums in rank order).
double mean_across_ranks(double local, MPI_Comm comm);

// Element-wise maximum across ranks of equally long per-iteration series, on every rank:
// the time of iteration i is the slowest rank's time (nccl-tests / IMB convention).
std::vector<double> max_across_ranks(std::span<const double> local, MPI_Comm comm);

}  // namespace sp

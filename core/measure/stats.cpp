#include "core/measure/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/run/error.hpp"

namespace sp {

double quantile_sorted(std::span<const double> s, double q) {
  if (s.empty()) return 0;
  double pos = q * double(s.size() - 1);
  std::size_t lo = static_cast<std::size_t>(std::floor(pos));
  std::size_t hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (pos - double(lo)) * (s[hi] - s[lo]);
}

Summary summarize(std::span<const double> values) {
  Summary r;
  r.n = values.size();
  if (values.empty()) return r;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  r.min = sorted.front();
  r.max = sorted.back();
  r.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / double(r.n);
  r.median = quantile_sorted(sorted, 0.5);
  r.p99 = quantile_sorted(sorted, 0.99);
  double ss = 0;
  for (double v : sorted) ss += (v - r.mean) * (v - r.mean);
  r.stddev = r.n > 1 ? std::sqrt(ss / double(r.n - 1)) : 0;
  return r;
}

RankSpread spread_across_ranks(double local, MPI_Comm comm, bool counted) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<double> all(2 * std::size_t(size));
  const double mine[2] = {local, counted ? 1.0 : 0.0};
  SP_MPI_CHECK(MPI_Allgather(mine, 2, MPI_DOUBLE, all.data(), 2, MPI_DOUBLE, comm));
  RankSpread r;
  bool first = true;
  double sum = 0;
  int n = 0;
  for (int q = 0; q < size; ++q) {  // in rank order, so the mean is the same on every rank
    if (all[2 * std::size_t(q) + 1] == 0) continue;
    const double v = all[2 * std::size_t(q)];
    if (first || v > r.max) r.max = v, r.slowest_rank = q;
    if (first || v < r.min) r.min = v;
    first = false;
    sum += v;
    ++n;
  }
  r.mean = n > 0 ? sum / double(n) : 0.0;
  return r;
}

double mean_across_ranks(double local, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &local, 1, MPI_DOUBLE, MPI_SUM, comm));
  return local / size;
}

std::vector<double> max_across_ranks(std::span<const double> local, MPI_Comm comm) {
  std::vector<double> out(local.size());
  if (!local.empty())
    SP_MPI_CHECK(MPI_Allreduce(local.data(), out.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_MAX, comm));
  return out;
}

}  // namespace sp

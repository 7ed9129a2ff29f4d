// check_mean_against_reference (reducer.hpp): a reduction's result against MPI_Allreduce in double.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/run/error.hpp"
#include "core/run/program.hpp"
#include "trainers/dp/reducer.hpp"

namespace sp::dp {

// Summation order differs between algorithms, so the tolerance is the float rounding bound of a
// p-term sum, p x eps x sum|x_r|, doubled, plus the scaling's rounding.
void check_mean_against_reference(MPI_Comm comm, std::vector<double> inputs, const float* result, double scale,
                                  const std::string& what, const std::vector<ShardRange>* only) {
  int rank = 0, nranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  const std::size_t n = inputs.size();
  std::vector<double> magnitude(n);
  for (std::size_t i = 0; i < n; ++i) magnitude[i] = std::fabs(inputs[i]);
  const std::size_t step = std::size_t(1) << 26;  // MPI counts are int
  for (std::size_t o = 0; o < n; o += step) {
    const int c = int(std::min(step, n - o));
    SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, inputs.data() + o, c, MPI_DOUBLE, MPI_SUM, comm));
    SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, magnitude.data() + o, c, MPI_DOUBLE, MPI_SUM, comm));
  }
  const double eps = std::numeric_limits<float>::epsilon();
  long long bad = 0;
  double detail[3] = {0, 0, 0};  // element, got, expected of this rank's first wrong element
  const std::vector<ShardRange> everything{{0, n, 0}};
  for (const ShardRange& range : only ? *only : everything) {
    for (std::size_t i = range.offset; i < range.offset + range.numel; ++i) {
      const double expect = inputs[i] * scale;
      const double got = result[i];
      const double tol = 2.0 * (nranks + 2) * eps * magnitude[i] * scale + 1e-30;
      if (!(std::fabs(got - expect) <= tol)) {
        if (bad == 0) detail[0] = double(i), detail[1] = got, detail[2] = expect;
        ++bad;
      }
    }
  }
  long long total = 0;
  SP_MPI_CHECK(MPI_Allreduce(&bad, &total, 1, MPI_LONG_LONG, MPI_SUM, comm));
  if (total == 0) return;
  int first = bad > 0 ? rank : nranks;
  SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm));
  SP_MPI_CHECK(MPI_Bcast(detail, 3, MPI_DOUBLE, first, comm));
  throw CollectiveError(fmt::format(
      "{} gave a wrong result: {} element(s) differ from MPI_Allreduce, first on rank {}: element {} is {:.9g}, "
      "expected {:.9g}",
      what, total, first, (long long)detail[0], detail[1], detail[2]));
}

}  // namespace sp::dp

#include "membw.hpp"

#include <omp.h>

#include <algorithm>
#include <memory>

#include "provenance.hpp"
#include "stats.hpp"
#include "timer.hpp"

namespace sp {

CopyBandwidth measure_copy_bandwidth(std::size_t array_bytes, int reps) {
  if (array_bytes == 0) array_bytes = std::max<std::size_t>(64u << 20, 4 * last_level_cache_bytes());
  std::size_t n = array_bytes / sizeof(double);
  std::unique_ptr<double[]> a(new double[n]), b(new double[n]);
  // First touch in parallel so pages land near the threads that use them.
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = 1.0;
    b[i] = double(i);
  }
  std::vector<double> rates;
  for (int r = 0; r < reps; ++r) {
    double t0 = wall_seconds();
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) a[i] = b[i];
    double t = wall_seconds() - t0;
    rates.push_back(2.0 * double(n * sizeof(double)) / t / 1e9);
  }
  // Read the result so the copies cannot be optimised away.
  volatile double sink = a[n / 2];
  (void)sink;
  Summary s = summarize(rates);
  return {s.max, s.median, n * sizeof(double), omp_get_max_threads()};
}

}  // namespace sp

#include "core/measure/membw.hpp"

#include <omp.h>

#include <memory>
#include <vector>

#include "core/measure/cache_flush.hpp"
#include "core/measure/stats.hpp"
#include "core/measure/timer.hpp"

namespace sp {

CopyBandwidth measure_copy_bandwidth(std::size_t array_bytes, int reps) {
  std::size_t n = array_bytes / sizeof(double);
  std::unique_ptr<double[]> a(new double[n]), b(new double[n]);
  const bool flush = cache_flush_supported();
  // First touch in parallel so pages land near the threads that use them; every later pass
  // (flush and copy) splits the range the same way.
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = 1.0;
    b[i] = double(i);
  }
  std::vector<double> rates;
  for (int r = 0; r < reps; ++r) {
    if (flush) {
#pragma omp parallel
      {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        std::size_t lo = n * t / nt, hi = n * (t + 1) / nt;
        flush_from_cache(a.get() + lo, (hi - lo) * sizeof(double));
        flush_from_cache(b.get() + lo, (hi - lo) * sizeof(double));
      }
    }
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
  return {s.max, s.median, n * sizeof(double), flush, omp_get_max_threads()};
}

}  // namespace sp

// Issue 28's fixed SGEMM probe: C = A . B, square n x n x n, row-major, one library chosen at
// compile time (OpenBLAS's cblas, BLIS's bli_sgemm, oneDNN's dnnl_sgemm). Prints the median
// GFLOP/s of `reps` timed calls after two warm-up calls.
//   sgemm_probe N REPS   ->   library <TAB> n <TAB> median GFLOP/s <TAB> min <TAB> max
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "../lib/sgemm_library.hpp"

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1024, reps = argc > 2 ? std::atoi(argv[2]) : 15;
  if (n < 1 || reps < 1) return std::fprintf(stderr, "sgemm_probe: N and REPS must be positive\n"), 2;
  std::vector<float> a(std::size_t(n) * n, 0.5f), b(a.size(), 0.25f), c(a.size());
  sgemm(false, false, n, n, n, a.data(), b.data(), c.data());
  sgemm(false, false, n, n, n, a.data(), b.data(), c.data());
  std::vector<double> gflops;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    sgemm(false, false, n, n, n, a.data(), b.data(), c.data());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    gflops.push_back(2.0 * n * n * double(n) / s * 1e-9);
  }
  std::sort(gflops.begin(), gflops.end());
  std::printf("%s\t%d\t%.1f\t%.1f\t%.1f\n", kLib, n, gflops[gflops.size() / 2], gflops.front(), gflops.back());
}

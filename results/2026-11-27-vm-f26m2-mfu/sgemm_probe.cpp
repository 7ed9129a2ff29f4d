// Issue 28's fixed SGEMM probe: C = A . B, square n x n x n, row-major, one library chosen at
// compile time (OpenBLAS's cblas, BLIS's bli_sgemm, oneDNN's dnnl_sgemm). Prints the median
// GFLOP/s of `reps` timed calls after two warm-up calls.
//   sgemm_probe N REPS   ->   library <TAB> n <TAB> median GFLOP/s <TAB> min <TAB> max
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#if defined(USE_OPENBLAS)
#include <cblas.h>
static const char* kLib = "openblas";
#elif defined(USE_BLIS)
#include <blis.h>
static const char* kLib = "blis";
#elif defined(USE_DNNL)
#include <dnnl.h>
static const char* kLib = "onednn";
#endif

static void sgemm(int n, const float* A, const float* B, float* C) {
#if defined(USE_OPENBLAS)
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n);
#elif defined(USE_BLIS)
  float one = 1.0f, zero = 0.0f;
  bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, n, n, n, &one, const_cast<float*>(A), n, 1, const_cast<float*>(B), n,
            1, &zero, C, n, 1);
#elif defined(USE_DNNL)
  dnnl_sgemm('N', 'N', n, n, n, 1.0f, A, n, B, n, 0.0f, C, n);
#endif
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1024, reps = argc > 2 ? std::atoi(argv[2]) : 15;
  if (n < 1 || reps < 1) return std::fprintf(stderr, "sgemm_probe: N and REPS must be positive\n"), 2;
  std::vector<float> a(std::size_t(n) * n, 0.5f), b(a.size(), 0.25f), c(a.size());
  sgemm(n, a.data(), b.data(), c.data());
  sgemm(n, a.data(), b.data(), c.data());
  std::vector<double> gflops;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    sgemm(n, a.data(), b.data(), c.data());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    gflops.push_back(2.0 * n * n * double(n) / s * 1e-9);
  }
  std::sort(gflops.begin(), gflops.end());
  std::printf("%s\t%d\t%.1f\t%.1f\t%.1f\n", kLib, n, gflops[gflops.size() / 2], gflops.front(), gflops.back());
}

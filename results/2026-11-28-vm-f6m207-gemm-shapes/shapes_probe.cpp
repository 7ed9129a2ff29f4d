#include <dnnl.h>
#include <cblas.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "../lib/gemm_shape_timing.hpp"
int main(int argc, char** argv) {
  int cold = argc > 1 ? atoi(argv[1]) : 1;
  std::vector<probe::GemmShape> shapes = probe::gpt_tiny_gemm_shapes();  // then attention's per-head GEMMs
  shapes.insert(shapes.end(), {{0, 0, 128, 64, 128, 0}, {0, 1, 128, 128, 64, 0}, {1, 0, 128, 64, 128, 0}});
  std::vector<float> A(4 << 20, 0.01f), B(4 << 20, 0.02f), C(4 << 20);
  probe::CacheFlush flush;
  for (auto& s : shapes) {
    int lda = s.ta ? s.M : s.K, ldb = s.tb ? s.K : s.N;
    double t[2];
    t[0] = probe::median_seconds(21, cold, flush, [&] {
      dnnl_sgemm(s.ta ? 'T' : 'N', s.tb ? 'T' : 'N', s.M, s.N, s.K, 1, A.data(), lda, B.data(), ldb, s.beta, C.data(),
                 s.N);
    });
    t[1] = probe::median_seconds(21, cold, flush, [&] {
      cblas_sgemm(CblasRowMajor, s.ta ? CblasTrans : CblasNoTrans, s.tb ? CblasTrans : CblasNoTrans, s.M, s.N, s.K, 1,
                  A.data(), lda, B.data(), ldb, s.beta, C.data(), s.N);
    });
    double f = 2.0 * s.M * s.N * s.K;
    printf("%c%c M=%4d N=%4d K=%4d beta=%g  dnnl %6.1f  openblas %6.1f GFLOP/s  openblas/dnnl time %.2f\n",
           s.ta ? 'T' : 'N', s.tb ? 'T' : 'N', s.M, s.N, s.K, s.beta, f / t[0] / 1e9, f / t[1] / 1e9, t[1] / t[0]);
  }
}

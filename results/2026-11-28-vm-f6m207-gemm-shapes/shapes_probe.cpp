#include <dnnl.h>
#include <cblas.h>
#include <chrono>
#include <cstdio>
#include <vector>
#include <algorithm>
using clk = std::chrono::steady_clock;
struct S {
  bool ta, tb;
  int M, N, K;
  float beta;
};
int main(int argc, char** argv) {
  int cold = argc > 1 ? atoi(argv[1]) : 1;
  S shapes[] = {{0, 0, 1024, 256, 256, 0},  {0, 0, 1024, 256, 768, 0},  {0, 0, 1024, 256, 1024, 0},
                {0, 0, 1024, 1024, 256, 0}, {0, 1, 1024, 256, 256, 1},  {0, 1, 1024, 256, 1024, 1},
                {0, 1, 1024, 768, 256, 1},  {0, 1, 1024, 1024, 256, 1}, {1, 0, 256, 256, 1024, 1},
                {1, 0, 256, 1024, 1024, 1}, {1, 0, 768, 256, 1024, 1},  {1, 0, 1024, 256, 1024, 1},
                {0, 0, 128, 64, 128, 0},    {0, 1, 128, 128, 64, 0},    {1, 0, 128, 64, 128, 0}};
  std::vector<float> A(4 << 20, 0.01f), B(4 << 20, 0.02f), C(4 << 20), big(64 << 20);
  auto flush = [&] {
    for (size_t i = 0; i < big.size(); i += 16) big[i] += 1;
  };
  for (auto& s : shapes) {
    int lda = s.ta ? s.M : s.K, ldb = s.tb ? s.K : s.N;
    double t[2];
    for (int lib = 0; lib < 2; lib++) {
      std::vector<double> ts;
      for (int r = 0; r < 21; r++) {
        if (cold) flush();
        auto a = clk::now();
        if (lib == 0)
          dnnl_sgemm(s.ta ? 'T' : 'N', s.tb ? 'T' : 'N', s.M, s.N, s.K, 1, A.data(), lda, B.data(), ldb, s.beta,
                     C.data(), s.N);
        else
          cblas_sgemm(CblasRowMajor, s.ta ? CblasTrans : CblasNoTrans, s.tb ? CblasTrans : CblasNoTrans, s.M, s.N, s.K,
                      1, A.data(), lda, B.data(), ldb, s.beta, C.data(), s.N);
        ts.push_back(std::chrono::duration<double>(clk::now() - a).count());
      }
      std::sort(ts.begin(), ts.end());
      t[lib] = ts[10];
    }
    double f = 2.0 * s.M * s.N * s.K;
    printf("%c%c M=%4d N=%4d K=%4d beta=%g  dnnl %6.1f  openblas %6.1f GFLOP/s  openblas/dnnl time %.2f\n",
           s.ta ? 'T' : 'N', s.tb ? 'T' : 'N', s.M, s.N, s.K, s.beta, f / t[0] / 1e9, f / t[1] / 1e9, t[1] / t[0]);
  }
}

// gpt-tiny's linear-layer backward (batch 8: N = 1024 rows) as one pair of oneDNN GEMMs,
// dX = dY . W and dW += dY^T . X, or as the same pair per chunk of rows, so that each chunk of dY
// is read by the second GEMM while it is still in L2. One thread; a 256 MiB pass over memory
// before each repetition (the step's operands come from beyond L2: ../2026-11-28-vm-f6m207-gemm-shapes);
// the median of 21 repetitions. Built and run by measure.sh.
#include <dnnl.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <chrono>
#include <random>
using clk = std::chrono::steady_clock;
static void gemm(bool ta, bool tb, int M, int N, int K, const float* A, int lda, const float* B, int ldb, float beta,
                 float* C, int ldc) {
  dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc);
}
int main() {
  const int N = 1024;
  std::vector<float> big(64 << 20);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  struct Shape {
    int C, OC;
    const char* name;
  };
  for (Shape sh :
       {Shape{256, 1024, "fc"}, Shape{1024, 256, "fcproj"}, Shape{256, 768, "qkv"}, Shape{256, 256, "attproj"}}) {
    const int C = sh.C, OC = sh.OC;
    std::vector<float> dY((size_t)N * OC), W((size_t)OC * C), X((size_t)N * C), dX((size_t)N * C), dW((size_t)OC * C);
    for (auto* v : {&dY, &W, &X})
      for (auto& x : *v) x = u(rng);
    for (int chunk : {1024, 512, 256, 128}) {
      std::vector<double> ts;
      for (int r = 0; r < 21; r++) {
        for (size_t i = 0; i < big.size(); i += 16) big[i] += 1;
        auto a = clk::now();
        for (int r0 = 0; r0 < N; r0 += chunk) {
          gemm(false, false, chunk, C, OC, dY.data() + (size_t)r0 * OC, OC, W.data(), C, 0.0f,
               dX.data() + (size_t)r0 * C, C);
          gemm(true, false, OC, C, chunk, dY.data() + (size_t)r0 * OC, OC, X.data() + (size_t)r0 * C, C, 1.0f,
               dW.data(), C);
        }
        ts.push_back(std::chrono::duration<double>(clk::now() - a).count());
      }
      std::sort(ts.begin(), ts.end());
      double fl = 4.0 * N * C * OC;
      printf("%-8s chunk %4d: %.3f ms  %.1f GFLOP/s\n", sh.name, chunk, ts[10] * 1e3, fl / ts[10] / 1e9);
    }
  }
}

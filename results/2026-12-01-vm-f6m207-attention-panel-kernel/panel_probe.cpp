// Would a hand-written AVX-512 kernel beat dnnl_sgemm on attention's per-head GEMMs (gpt-tiny:
// T = 128, head size 64, 64-row query blocks; kernels/attention.cpp)? The kernel: C[M, N] =
// alpha * op(A) . B (+ beta C), a 6-row x 64-column register tile (24 accumulators), each A element
// broadcast (A read through row and column strides, so P^T needs no copy), each row of B loaded
// as four 16-float vectors; no packing. Q . K^T needs K transposed first (timed with it).
// One thread, the operands hot; per shape and repetition, GFLOP/s over 2000 calls of each.
//   g++ -O3 -march=x86-64-v4 -ffp-contract=fast panel_probe.cpp -o panel_probe -ldnnl
#include <dnnl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

typedef float Lanes __attribute__((vector_size(64)));

template <int MR, int NV>
static inline void tile(int K, float alpha, const float* A, long ars, long aks, const float* B, long ldb, float beta,
                        float* C, long ldc) {
  Lanes acc[MR][NV];
  for (int r = 0; r < MR; r++)
    for (int v = 0; v < NV; v++) acc[r][v] = Lanes{};
  for (int k = 0; k < K; k++) {
    Lanes b[NV];
    for (int v = 0; v < NV; v++) __builtin_memcpy(&b[v], B + k * ldb + 16 * v, 64);
    for (int r = 0; r < MR; r++) {
      const Lanes a = Lanes{} + A[r * ars + k * aks];
      for (int v = 0; v < NV; v++) acc[r][v] += a * b[v];
    }
  }
  for (int r = 0; r < MR; r++)
    for (int v = 0; v < NV; v++) {
      Lanes c = alpha * acc[r][v];
      if (beta != 0.0f) {
        Lanes old;
        __builtin_memcpy(&old, C + r * ldc + 16 * v, 64);
        c += beta * old;
      }
      __builtin_memcpy(C + r * ldc + 16 * v, &c, 64);
    }
}

template <int NV>
static void panel(int M, int K, float alpha, const float* A, long ars, long aks, const float* B, long ldb, float beta,
                  float* C, long ldc) {
  int i = 0;
  for (; i + 6 <= M; i += 6) tile<6, NV>(K, alpha, A + i * ars, ars, aks, B, ldb, beta, C + i * ldc, ldc);
  const float* a = A + i * ars;
  float* c = C + i * ldc;
  switch (M - i) {
    case 5:
      tile<5, NV>(K, alpha, a, ars, aks, B, ldb, beta, c, ldc);
      break;
    case 4:
      tile<4, NV>(K, alpha, a, ars, aks, B, ldb, beta, c, ldc);
      break;
    case 3:
      tile<3, NV>(K, alpha, a, ars, aks, B, ldb, beta, c, ldc);
      break;
    case 2:
      tile<2, NV>(K, alpha, a, ars, aks, B, ldb, beta, c, ldc);
      break;
    case 1:
      tile<1, NV>(K, alpha, a, ars, aks, B, ldb, beta, c, ldc);
      break;
    default:
      break;
  }
}

// N a multiple of 16.
static void panel_gemm(int M, int N, int K, float alpha, const float* A, long ars, long aks, const float* B, long ldb,
                       float beta, float* C, long ldc) {
  for (int j = 0; j < N; j += 64) {
    switch ((N - j < 64 ? N - j : 64) / 16) {
      case 4:
        panel<4>(M, K, alpha, A, ars, aks, B + j, ldb, beta, C + j, ldc);
        break;
      case 3:
        panel<3>(M, K, alpha, A, ars, aks, B + j, ldb, beta, C + j, ldc);
        break;
      case 2:
        panel<2>(M, K, alpha, A, ars, aks, B + j, ldb, beta, C + j, ldc);
        break;
      default:
        panel<1>(M, K, alpha, A, ars, aks, B + j, ldb, beta, C + j, ldc);
        break;
    }
  }
}

static double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <class F>
static double gflops(double flop_per_call, int calls, F&& call) {
  const double t0 = seconds();
  for (int r = 0; r < calls; r++) call();
  return flop_per_call * calls / (seconds() - t0) * 1e-9;
}

int main() {
  const int T = 128, hs = 64, C3 = 768, calls = 2000, repetitions = 7;
  std::vector<float> qkv(T * C3), p(T * T), want(T * T), got(T * T), kt(hs * T);
  std::mt19937 gen(1);
  std::normal_distribution<float> normal;
  for (float& x : qkv) x = normal(gen);
  for (float& x : p) x = normal(gen);
  const float *q = qkv.data(), *k = q + 256, *v = q + 512;
  // Each shape: its name, flop per call, the library call, the kernel's call.
  struct Case {
    const char* name;
    double flop;
  };
  const Case cases[] = {{"P.V (64x64, K=128)", 2.0 * 64 * 64 * 128},
                        {"Q.K^T (64x128, K=64), kernel with K transposed", 2.0 * 64 * 128 * 64},
                        {"P^T.dO (128x64, K=64, beta 1)", 2.0 * 128 * 64 * 64}};
  auto library = [&](int c) {
    if (c == 0) dnnl_sgemm('N', 'N', 64, 64, 128, 1.0f, p.data(), T, v, C3, 0.0f, want.data(), T);
    if (c == 1) dnnl_sgemm('N', 'T', 64, 128, 64, 0.125f, q, C3, k, C3, 0.0f, want.data(), T);
    if (c == 2) dnnl_sgemm('T', 'N', 128, 64, 64, 1.0f, p.data(), T, q, C3, 1.0f, want.data(), T);
  };
  auto kernel = [&](int c) {
    if (c == 0) panel_gemm(64, 64, 128, 1.0f, p.data(), T, 1, v, C3, 0.0f, got.data(), T);
    if (c == 1) {
      for (int t = 0; t < T; t++)
        for (int d = 0; d < hs; d++) kt[d * T + t] = k[t * C3 + d];
      panel_gemm(64, 128, 64, 0.125f, q, C3, 1, kt.data(), T, 0.0f, got.data(), T);
    }
    if (c == 2) panel_gemm(128, 64, 64, 1.0f, p.data(), 1, T, q, C3, 1.0f, got.data(), T);
  };
  for (int c = 0; c < 3; c++) {
    // The same result first (beta 0 cases from zero; the beta-1 case from equal starting C).
    std::fill(want.begin(), want.end(), 0.0f);
    std::fill(got.begin(), got.end(), 0.0f);
    library(c);
    kernel(c);
    double diff = 0;
    for (int i = 0; i < T * T; i++) diff = std::fmax(diff, std::fabs(double(want[i]) - double(got[i])));
    std::printf("%s: max |library - kernel| %.3g\n", cases[c].name, diff);
    for (int r = 0; r < repetitions; r++) {
      const double lib = gflops(cases[c].flop, calls, [&] { library(c); });
      const double ker = gflops(cases[c].flop, calls, [&] { kernel(c); });
      std::printf("  repetition %d: dnnl_sgemm %.1f GFLOP/s, kernel %.1f GFLOP/s, kernel / library %.3f\n", r + 1, lib,
                  ker, ker / lib);
    }
  }
}

// The SGEMM of one library chosen at compile time, as the library probes of
// ../2026-11-26-vm-f26m2-gemm-libraries (gemm_bench.cpp) and ../2026-11-27-vm-f26m2-mfu
// (sgemm_probe.cpp) call it: -DUSE_OPENBLAS (cblas), -DUSE_BLIS (bli_sgemm, strides) or -DUSE_DNNL
// (dnnl_sgemm). Header only: each probe's g++ lines in its measure.sh build it as they are.
#pragma once
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

// C[M,N] = op(A) . op(B), row-major; ta: A is stored [K,M]; tb: B is stored [N,K].
static void sgemm(bool ta, bool tb, int M, int N, int K, const float* A, const float* B, float* C) {
  const int lda = ta ? M : K, ldb = tb ? K : N;
#if defined(USE_OPENBLAS)
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, 1.0f, A, lda, B,
              ldb, 0.0f, C, N);
#elif defined(USE_BLIS)
  float one = 1.0f, zero = 0.0f;
  bli_sgemm(ta ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, tb ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, M, N, K, &one,
            const_cast<float*>(A), lda, 1, const_cast<float*>(B), ldb, 1, &zero, C, N, 1);
#elif defined(USE_DNNL)
  dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', M, N, K, 1.0f, A, lda, B, ldb, 0.0f, C, N);
#endif
}

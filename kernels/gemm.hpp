// Every fp32 GEMM of the kernels goes through sgemm() below, which runs it in one of the GEMM
// libraries this build has: OpenBLAS (always; its kernel core chosen at start-up, blas.hpp) and
// oneDNN's dnnl_sgemm when the build found it (libdnnl-dev; oneDNN generates its kernels for the
// CPU at hand when it runs, so it is never left on a generic path by a CPU newer than itself).
// The library is chosen once per process, on first use: SCALEPROBE_GEMM (onednn | openblas) if set,
// else oneDNN when built with it. Measured in the trainers' steps, same binary, interleaved
// (results/2026-11-28-vm-f6m207-gemm-onednn): gpt-tiny's step 0.94x (1 thread) and 0.81x (2) of
// OpenBLAS's with its best core, its attention GEMMs (T x T x head size) 0.73-0.84x; ResNet-20,
// whose 3x3 convolutions are our own, unchanged at 1 thread. Both are fp32 with fp32 accumulation
// and deterministic for a given thread count; OpenBLAS's results do not depend on the thread count,
// oneDNN's do, and the two differ from each other in the last bits: a run's library is in its
// trace (gemm_library) and two runs compare bitwise only when it and the thread count are the same.
#pragma once

#include <string>
#include <vector>

namespace sp::kernels {

// C[M,N] = alpha * op(A) · op(B) + beta * C, row-major. op(A) is M×K: A is stored [M, lda] or,
// with trans_a, [K, lda] (A^T). op(B) is K×N: B is stored [K, ldb] or, with trans_b, [N, ldb].
void sgemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
           int ldb, float beta, float* C, int ldc);

// sgemm in the named library of this build, whichever is in use (tests compare every library with
// a reference); throws std::invalid_argument for a name not in gemm_libraries().
void sgemm_in(const std::string& library, bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A,
              int lda, const float* B, int ldb, float beta, float* C, int ldc);

// The GEMM libraries of this build (the default first: "onednn" when built with it, "openblas") and the one in
// use (throws std::invalid_argument naming the problem when SCALEPROBE_GEMM names another).
std::vector<std::string> gemm_libraries();
std::string gemm_library();
// The library in use and its version for header lines, e.g. "onednn (oneDNN 2.6.3)".
std::string gemm_description();

}  // namespace sp::kernels

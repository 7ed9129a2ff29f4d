// Every fp32 GEMM of the kernels goes through sgemm() below, which runs it in one of the GEMM
// libraries this build has: OpenBLAS (always; its kernel core chosen at start-up, blas.hpp) and
// oneDNN's dnnl_sgemm when the build found it (libdnnl-dev; oneDNN generates its kernels for the
// CPU at hand when it runs, so it is never left on a generic path by a CPU newer than itself).
// The libraries are chosen once per process, on first use, per use of the GEMM: SCALEPROBE_GEMM
// (onednn | openblas: every GEMM in it) if set, else (auto) by what was measured in the trainers'
// steps, same binary, interleaved:
//  - attention's per-head GEMMs (T x T x head size) in oneDNN: 0.73-0.84x OpenBLAS's time on an
//    AVX-512 Xeon (results/2026-11-28-vm-f6m207-gemm-onednn), 0.78-0.86x on an AVX2 AMD EPYC
//    family 23 (results/2026-11-29-vm-f23m1-gemm-onednn);
//  - the dense layers' GEMMs (linear layers, im2col convolutions) in oneDNN where the CPU has
//    AVX-512 (0.80-0.96x there) and in OpenBLAS with its best core where it has not (oneDNN
//    1.03-1.07x on the AVX2 EPYC; on a Zen 5 the two were within 1 %,
//    results/2026-11-26-vm-f26m2-gemm-libraries).
// Both are fp32 with fp32 accumulation and deterministic for a given thread count; OpenBLAS's results
// do not depend on the thread count, oneDNN's do, and the two differ from each other in the last bits:
// a run's choice is in its trace (gemm_library) and two runs compare bitwise only when it and the
// thread count are the same.
#pragma once

#include <string>
#include <vector>

namespace sp::kernels {

// What a GEMM computes, for the choice of library (above).
enum class GemmUse { dense, attention };

// C[M,N] = alpha * op(A) · op(B) + beta * C, row-major. op(A) is M×K: A is stored [M, lda] or,
// with trans_a, [K, lda] (A^T). op(B) is K×N: B is stored [K, ldb] or, with trans_b, [N, ldb].
void sgemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
           int ldb, float beta, float* C, int ldc, GemmUse use = GemmUse::dense);

// sgemm in the named library of this build, whichever is in use (tests compare every library with
// a reference); throws std::invalid_argument for a name not in gemm_libraries().
void sgemm_in(const std::string& library, bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A,
              int lda, const float* B, int ldb, float beta, float* C, int ldc);

// The GEMM libraries of this build ("onednn" when built with it, "openblas"), the one a use of the
// GEMM runs in, and the choice for the trace: one name when every use runs in the same library, else
// e.g. "openblas (attention: onednn)". They throw std::invalid_argument naming the problem when
// SCALEPROBE_GEMM is neither auto nor a library of the build.
std::vector<std::string> gemm_libraries();
std::string gemm_library(GemmUse use);
std::string gemm_library();
// The choice and oneDNN's version when it is used, for header lines, e.g. "onednn (oneDNN 2.6.3)" or
// "openblas, attention in onednn (oneDNN 2.6.3)".
std::string gemm_description();

}  // namespace sp::kernels

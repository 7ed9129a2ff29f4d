// kernels/gemm.hpp: every GEMM library of the build against a double-precision reference, for
// every transpose pair, odd shapes, padded leading dimensions, alpha and beta; beta = 0 must not
// read C (the trainers pass uninitialised outputs); the library in use is the documented default.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu_features.hpp"
#include "kernels/gemm.hpp"
#include "kernels/random_fill.hpp"
#include "tests/lib/optional_part.hpp"

namespace k = sp::kernels;

namespace {

struct Case {
  bool ta, tb;
  int M, N, K;
  float alpha, beta;
};

// Runs one case in `library` and compares within the float dot-product bound
// |err| <= 2 * (K + 1) * 2^-24 * sum |terms|; the padding of C beyond N must stay as it was.
void check(const std::string& library, const Case& c, unsigned seed) {
  const int pad = 3;
  const int rows_a = c.ta ? c.K : c.M, cols_a = c.ta ? c.M : c.K;
  const int rows_b = c.tb ? c.N : c.K, cols_b = c.tb ? c.K : c.N;
  const int lda = cols_a + pad, ldb = cols_b + pad, ldc = c.N + pad;
  const std::vector<float> A = k::random_vec((size_t)rows_a * lda, seed),
                           B = k::random_vec((size_t)rows_b * ldb, seed + 1);
  const float sentinel = 12345.0f;
  std::vector<float> C = k::random_vec((size_t)c.M * ldc, seed + 2);
  for (int i = 0; i < c.M; i++)
    for (int j = c.N; j < ldc; j++) C[(size_t)i * ldc + j] = sentinel;
  // beta = 0: C's old values must be ignored, NaN included.
  if (c.beta == 0.0f)
    for (int i = 0; i < c.M; i++)
      for (int j = 0; j < c.N; j++) C[(size_t)i * ldc + j] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> C0 = C;
  k::sgemm_in(library, c.ta, c.tb, c.M, c.N, c.K, c.alpha, A.data(), lda, B.data(), ldb, c.beta, C.data(), ldc);
  const double gamma = 2.0 * (c.K + 1) * std::ldexp(1.0, -24);
  for (int i = 0; i < c.M; i++) {
    for (int j = 0; j < c.N; j++) {
      double ref = 0, abs_sum = 0;
      for (int p = 0; p < c.K; p++) {
        const double a = c.ta ? A[(size_t)p * lda + i] : A[(size_t)i * lda + p];
        const double b = c.tb ? B[(size_t)j * ldb + p] : B[(size_t)p * ldb + j];
        ref += c.alpha * a * b;
        abs_sum += std::fabs(c.alpha * a * b);
      }
      if (c.beta != 0.0f) {
        ref += c.beta * (double)C0[(size_t)i * ldc + j];
        abs_sum += std::fabs(c.beta * (double)C0[(size_t)i * ldc + j]);
      }
      const float got = C[(size_t)i * ldc + j];
      ASSERT_LE(std::fabs(got - ref), gamma * abs_sum + 1e-30)
          << library << " ta " << c.ta << " tb " << c.tb << " M " << c.M << " N " << c.N << " K " << c.K << " beta "
          << c.beta << " at (" << i << ", " << j << ")";
    }
    for (int j = c.N; j < ldc; j++) ASSERT_EQ(C[(size_t)i * ldc + j], sentinel) << library << ": wrote past N";
  }
}

}  // namespace

TEST(Gemm, EveryLibraryMatchesTheReference) {
  const std::vector<std::string> libraries = k::gemm_libraries();
  ASSERT_FALSE(libraries.empty());
  unsigned seed = 1;
  for (const std::string& lib : libraries)
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (auto [M, N, K] : {std::tuple{1, 1, 1}, {7, 13, 5}, {33, 17, 65}, {130, 70, 257}})
          for (float beta : {0.0f, 1.0f, 0.5f}) {
            check(lib, {ta, tb, M, N, K, 0.75f, beta}, seed += 3);
            if (HasFatalFailure()) return;
          }
}

TEST(Gemm, UnknownLibraryIsRefused) {
  float c = 0;
  EXPECT_THROW(k::sgemm_in("mkl", false, false, 1, 1, 1, 1.0f, &c, 1, &c, 1, 0.0f, &c, 1), std::invalid_argument);
}

// The auto choice (gemm.hpp): attention's GEMMs in oneDNN when the build has it, the dense ones in
// oneDNN only where the CPU has AVX-512; a build without oneDNN is an optional part.
TEST(Gemm, AutoChoiceFollowsTheMeasuredRule) {
  const std::vector<std::string> libraries = k::gemm_libraries();
  if (std::find(libraries.begin(), libraries.end(), "onednn") == libraries.end())
    SP_SKIP_OPTIONAL_PART("onednn", "this build has no oneDNN (configure found no libdnnl)");
  const char* asked = std::getenv("SCALEPROBE_GEMM");
  if (asked != nullptr && *asked != '\0' && std::string(asked) != "auto") {
    EXPECT_EQ(k::gemm_library(), std::string(asked));
    return;
  }
  const bool v4 = k::cpu_features().x86_64_v4();
  EXPECT_EQ(k::gemm_library(k::GemmUse::attention), "onednn");
  EXPECT_EQ(k::gemm_library(k::GemmUse::dense), v4 ? "onednn" : "openblas");
  EXPECT_EQ(k::gemm_library(), v4 ? "onednn" : "openblas (attention: onednn)");
}

// Forward-pass checks for sp::kernels against straightforward double-precision references,
// the causal mask of attention, and thread-count independence of the OpenMP kernels.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/kernels.hpp"
#include "kernels/profile.hpp"
#include "kernels/random_fill.hpp"

namespace k = sp::kernels;

namespace {

using sp::kernels::random_vec;

// out = inp · weight^T + bias by the naive triple loop in double, and compares within the
// standard float dot-product error bound |err| <= gamma_n * sum |terms| (gamma_n ~ n * 2^-24,
// whatever the summation order or FMA use), with n = C + 1 terms counting the bias, times 2.
void check_matmul_against_naive(int B, int T, int C, int OC, bool with_bias, unsigned seed) {
  const size_t N = (size_t)B * T;
  const std::vector<float> inp = random_vec(N * C, seed), weight = random_vec((size_t)OC * C, seed + 1);
  const std::vector<float> bias = random_vec(OC, seed + 2);
  std::vector<float> out(N * OC, std::numeric_limits<float>::quiet_NaN());  // must be overwritten
  k::matmul_forward(out.data(), inp.data(), weight.data(), with_bias ? bias.data() : nullptr, B, T, C, OC);
  const double gamma = 2.0 * (C + 1) * std::ldexp(1.0, -24);
  for (size_t n = 0; n < N; n++) {
    for (int o = 0; o < OC; o++) {
      double ref = with_bias ? bias[o] : 0.0;
      double abs_sum = std::fabs(ref);
      for (int c = 0; c < C; c++) {
        const double term = (double)inp[n * C + c] * (double)weight[(size_t)o * C + c];
        ref += term;
        abs_sum += std::fabs(term);
      }
      ASSERT_NEAR(out[n * OC + o], ref, gamma * abs_sum) << "row " << n << " col " << o;
    }
  }
}

}  // namespace

TEST(KernelsForward, MatmulMatchesNaiveLoop) {
  check_matmul_against_naive(2, 5, 8, 7, /*with_bias=*/true, 1);
  check_matmul_against_naive(3, 7, 19, 13, /*with_bias=*/false, 2);
  check_matmul_against_naive(4, 32, 64, 96, /*with_bias=*/true, 3);  // big enough for blocked GEMM
  check_matmul_against_naive(1, 33, 129, 257, /*with_bias=*/true, 4);
}

// The weight gradient sums the rows in blocks of kWeightGradientRows (one GEMM each): over
// 2 1/2 blocks it still equals dout^T · inp plus what dweight held, within the float bound.
TEST(KernelsForward, MatmulWeightGradientOverSeveralRowBlocks) {
  constexpr int C = 3, OC = 5;
  const int B = 2, T = k::kWeightGradientRows * 5 / 4, N = B * T;  // 2.5 blocks
  const std::vector<float> inp = random_vec((size_t)N * C, 40), dout = random_vec((size_t)N * OC, 41);
  const std::vector<float> weight = random_vec((size_t)OC * C, 42), dweight0 = random_vec((size_t)OC * C, 43);
  std::vector<float> dweight = dweight0;
  k::matmul_backward(nullptr, dweight.data(), nullptr, dout.data(), inp.data(), weight.data(), B, T, C, OC);
  const double gamma = 2.0 * (N + 1) * std::ldexp(1.0, -24);
  for (int o = 0; o < OC; o++) {
    for (int c = 0; c < C; c++) {
      double ref = dweight0[(size_t)o * C + c], abs_sum = std::fabs(ref);
      for (int n = 0; n < N; n++) {
        const double term = (double)dout[(size_t)n * OC + o] * (double)inp[(size_t)n * C + c];
        ref += term;
        abs_sum += std::fabs(term);
      }
      EXPECT_NEAR(dweight[(size_t)o * C + c], ref, gamma * abs_sum) << "o " << o << " c " << c;
    }
  }
}

// (row_block, T): row blocks of 4 at T = 6 (a block of 4 queries over 4 keys, one of 2 over all 6),
// one block; T = 40 in blocks of 16: rows of several whole vectors of the softmax (8 or 16 lanes)
// and, on 16 lanes, a row ending inside one.
class AttentionRowBlock : public ::testing::TestWithParam<std::tuple<int, int>> {};
INSTANTIATE_TEST_SUITE_P(KernelsForward, AttentionRowBlock,
                         ::testing::Values(std::make_tuple(4, 6), std::make_tuple(64, 6), std::make_tuple(16, 40)));

TEST_P(AttentionRowBlock, MatchesReferenceAndIsCausal) {
  const auto [row_block, T] = GetParam();
  constexpr int B = 2, C = 8, NH = 2, hs = C / NH;
  const size_t C3 = 3 * C;
  std::vector<float> qkv = random_vec((size_t)B * T * C3, 5, -2.0f, 2.0f);
  std::vector<float> out((size_t)B * T * C), att((size_t)B * NH * T * T, -1.0f);  // -1: every entry written
  k::attention_forward(out.data(), att.data(), qkv.data(), nullptr, B, T, C, NH, row_block);

  // Reference in double, straight from the definition.
  for (int b = 0; b < B; b++) {
    for (int h = 0; h < NH; h++) {
      for (int t = 0; t < T; t++) {
        std::vector<double> p(T, 0.0);
        double sum = 0.0;
        for (int t2 = 0; t2 <= t; t2++) {
          double dot = 0.0;
          for (int i = 0; i < hs; i++) {
            dot += (double)qkv[(b * T + t) * C3 + h * hs + i] * qkv[(b * T + t2) * C3 + C + h * hs + i];
          }
          p[t2] = std::exp(dot / std::sqrt((double)hs));
          sum += p[t2];
        }
        for (int t2 = 0; t2 < T; t2++) {
          p[t2] /= sum;
          EXPECT_NEAR(att[((b * NH + h) * T + t) * T + t2], p[t2], 1e-6) << b << h << t << t2;
        }
        for (int i = 0; i < hs; i++) {
          double o = 0.0;
          for (int t2 = 0; t2 <= t; t2++) o += p[t2] * qkv[(b * T + t2) * C3 + 2 * C + h * hs + i];
          EXPECT_NEAR(out[(b * T + t) * C + h * hs + i], o, 1e-5);
        }
      }
    }
  }

  // Causality: change q, k and v at every position after t0; outputs at t <= t0 must not move
  // (bit for bit), and those after t0 must (so the perturbation did take effect).
  constexpr int t0 = 2;
  std::vector<float> qkv2 = qkv;
  for (int b = 0; b < B; b++) {
    for (int t = t0 + 1; t < T; t++) {
      for (size_t c = 0; c < C3; c++) qkv2[(b * T + t) * C3 + c] += 0.5f;
    }
  }
  std::vector<float> out2(out.size()), att2(att.size());
  k::attention_forward(out2.data(), att2.data(), qkv2.data(), nullptr, B, T, C, NH, row_block);
  for (int b = 0; b < B; b++) {
    for (int t = 0; t < T; t++) {
      bool changed = false;
      for (int c = 0; c < C; c++) changed |= out2[(b * T + t) * C + c] != out[(b * T + t) * C + c];
      EXPECT_EQ(changed, t > t0) << "b=" << b << " t=" << t;
    }
  }
}

TEST(KernelsForward, LayernormMatchesReference) {
  constexpr int B = 2, T = 3, C = 16;
  const std::vector<float> inp = random_vec(B * T * C, 6, 2.0f, 4.0f);
  const std::vector<float> weight = random_vec(C, 7), bias = random_vec(C, 8);
  std::vector<float> out(inp.size()), mean(B * T), rstd(B * T);
  k::layernorm_forward(out.data(), mean.data(), rstd.data(), inp.data(), weight.data(), bias.data(), B, T, C);
  for (int n = 0; n < B * T; n++) {
    double m = 0.0, var = 0.0;
    for (int c = 0; c < C; c++) m += inp[n * C + c];
    m /= C;
    for (int c = 0; c < C; c++) var += (inp[n * C + c] - m) * (inp[n * C + c] - m);
    var /= C;
    const double s = 1.0 / std::sqrt(var + 1e-5);
    EXPECT_NEAR(mean[n], m, 1e-6);
    EXPECT_NEAR(rstd[n], s, 1e-5 * s);
    for (int c = 0; c < C; c++) {
      EXPECT_NEAR(out[n * C + c], (inp[n * C + c] - m) * s * weight[c] + bias[c], 1e-5);
    }
  }
}

TEST(KernelsForward, GeluKnownValues) {
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), evaluated in double precision.
  const std::vector<float> x = {-3.0f, -1.0f, 0.0f, 0.5f, 1.0f, 2.0f};
  const std::vector<double> want = {-0.0036373920817729943, -0.15880800939172324, 0.0,
                                    0.34571400982514394,    0.8411919906082768,   1.954597694087775};
  std::vector<float> y(x.size());
  k::gelu_forward(y.data(), x.data(), x.size());
  for (size_t i = 0; i < x.size(); i++) EXPECT_NEAR(y[i], want[i], 1e-6) << "x=" << x[i];
}

// The three kernels that take a GEMM's bias (and residual) into their own pass equal the add
// followed by the plain kernel, bit for bit, and leave the sum in place (the backward reads it).
TEST(KernelsForward, BiasTakenIntoTheNextPassEqualsTheAddThenTheKernel) {
  constexpr int B = 2, T = 40, C = 24, NH = 3;  // odd widths: vector loops end inside a vector
  const size_t N = (size_t)B * T;
  const std::vector<float> bias3 = random_vec(3 * C, 20), bias = random_vec(C, 21), bias4 = random_vec(4 * C, 22);
  auto add_rows = [](std::vector<float> v, const std::vector<float>& b) {
    for (size_t i = 0; i < v.size(); i++) v[i] += b[i % b.size()];
    return v;
  };

  // Attention: qkv's bias.
  std::vector<float> qkv = random_vec(N * 3 * C, 23, -2.0f, 2.0f);
  std::vector<float> qkv_sum = add_rows(qkv, bias3);
  std::vector<float> out(N * C), att((size_t)B * NH * T * T), out_ref(out.size()), att_ref(att.size());
  k::attention_forward(out.data(), att.data(), qkv.data(), bias3.data(), B, T, C, NH);
  k::attention_forward(out_ref.data(), att_ref.data(), qkv_sum.data(), nullptr, B, T, C, NH);
  EXPECT_EQ(qkv, qkv_sum);
  EXPECT_EQ(out, out_ref);
  EXPECT_EQ(att, att_ref);

  // Layer norm: residual + bias added to the linear layer's output.
  std::vector<float> sum = random_vec(N * C, 24, -3.0f, 3.0f);
  const std::vector<float> residual = random_vec(N * C, 25, -3.0f, 3.0f);
  const std::vector<float> lw = random_vec(C, 26), lb = random_vec(C, 27);
  std::vector<float> sum_ref = sum;
  for (size_t i = 0; i < sum.size(); i++) sum_ref[i] = sum_ref[i] + (residual[i] + bias[i % C]);
  std::vector<float> y(N * C), mean(N), rstd(N), y_ref(y.size()), mean_ref(N), rstd_ref(N);
  k::layernorm_residual_forward(y.data(), mean.data(), rstd.data(), sum.data(), bias.data(), residual.data(), lw.data(),
                                lb.data(), B, T, C);
  k::layernorm_forward(y_ref.data(), mean_ref.data(), rstd_ref.data(), sum_ref.data(), lw.data(), lb.data(), B, T, C);
  EXPECT_EQ(sum, sum_ref);
  EXPECT_EQ(y, y_ref);
  EXPECT_EQ(mean, mean_ref);
  EXPECT_EQ(rstd, rstd_ref);

  // GELU: fc's bias.
  std::vector<float> h = random_vec(N * 4 * C, 28, -4.0f, 4.0f);
  const std::vector<float> h_ref = add_rows(h, bias4);
  std::vector<float> g(h.size()), g_ref(h.size());
  k::gelu_bias_forward(g.data(), h.data(), bias4.data(), N, 4 * C);
  k::gelu_forward(g_ref.data(), h_ref.data(), h_ref.size());
  EXPECT_EQ(g, g_ref);
  // h now holds GELU's slope at h_ref: gelu_backward's with an output gradient of 1, to float
  // rounding (the two loops round the same terms in another order; the slope, whose terms cancel
  // near GELU's minimum, is O(1) at most).
  std::vector<float> slope_ref(h.size());
  k::gelu_backward(slope_ref.data(), h_ref.data(), std::vector<float>(h.size(), 1.0f).data(), h.size(), false);
  for (size_t i = 0; i < h.size(); i++) ASSERT_NEAR(h[i], slope_ref[i], 1e-6f) << "element " << i << " at " << h_ref[i];
}

// The backward passes that take a GEMM's bias gradient on the way (GELU for fc, attention for
// qkv) write the same input gradient as without (attention's bit for bit, GELU's to float rounding:
// it multiplies by the slope its forward kept), and add its column sums.
TEST(KernelsForward, BiasGradientTakenInThePassIsTheColumnSum) {
  constexpr int B = 3, T = 40, C = 24, NH = 3;
  const size_t N = (size_t)B * T;
  // rows x columns column sums in double, against float within a generous bound.
  auto expect_column_sums = [](const std::vector<float>& got, const std::vector<float>& start,
                               const std::vector<float>& m, size_t columns, const char* what) {
    for (size_t c = 0; c < columns; c++) {
      double ref = start[c], abs_sum = std::fabs(ref);
      for (size_t r = 0; r < m.size() / columns; r++)
        ref += m[r * columns + c], abs_sum += std::fabs(m[r * columns + c]);
      EXPECT_NEAR(got[c], ref, 1e-5 * abs_sum) << what << " column " << c;
    }
  };

  const std::vector<float> h = random_vec(N * 4 * C, 30, -4.0f, 4.0f), dg = random_vec(h.size(), 31);
  const std::vector<float> fcb0 = random_vec(4 * C, 32);
  std::vector<float> dh(h.size()), dh_ref(h.size()), dfcb = fcb0;
  // The slopes gelu_bias_forward leaves in its input (a bias of 0: h itself is the pre-activation).
  std::vector<float> slope = h, g(h.size());
  k::gelu_bias_forward(g.data(), slope.data(), std::vector<float>(4 * C, 0.0f).data(), N, 4 * C);
  k::gelu_bias_backward(dh.data(), dfcb.data(), slope.data(), dg.data(), N, 4 * C);
  k::gelu_backward(dh_ref.data(), h.data(), dg.data(), h.size(), /*accumulate=*/false);
  for (size_t i = 0; i < h.size(); i++)  // to float rounding, as the slope above (|dg| <= 1)
    ASSERT_NEAR(dh[i], dh_ref[i], 1e-6f) << "element " << i;
  expect_column_sums(dfcb, fcb0, dh, 4 * C, "fc bias");
  std::vector<float> in_place = dg, dfcb2 = fcb0;  // dinp over dout, as the GPT backward calls it
  k::gelu_bias_backward(in_place.data(), dfcb2.data(), slope.data(), in_place.data(), N, 4 * C);
  EXPECT_EQ(in_place, dh);
  EXPECT_EQ(dfcb2, dfcb);

  std::vector<float> qkv = random_vec(N * 3 * C, 33, -2.0f, 2.0f);
  const std::vector<float> dy = random_vec(N * C, 34), qkvb0 = random_vec(3 * C, 35);
  std::vector<float> out(N * C), att((size_t)B * NH * T * T);
  k::attention_forward(out.data(), att.data(), qkv.data(), nullptr, B, T, C, NH);
  for (const bool accumulate : {false, true}) {
    const std::vector<float> dqkv0 = random_vec(qkv.size(), 36);
    std::vector<float> dqkv = dqkv0, dqkv_ref = dqkv0, dqkvb = qkvb0;
    k::attention_backward(dqkv.data(), dqkvb.data(), dy.data(), qkv.data(), att.data(), B, T, C, NH, accumulate, 16);
    k::attention_backward(dqkv_ref.data(), nullptr, dy.data(), qkv.data(), att.data(), B, T, C, NH, accumulate, 16);
    EXPECT_EQ(dqkv, dqkv_ref);
    expect_column_sums(dqkvb, qkvb0, dqkv_ref, 3 * C, accumulate ? "qkv bias, accumulated" : "qkv bias");
  }
}

TEST(KernelsForward, SoftmaxCrossEntropyValuesAndStability) {
  constexpr int B = 1, T = 3, V = 4;
  // Row 2 has logits so large that exp overflows float without the max shift.
  const std::vector<float> logits = {
      1.0f,    2.0f, 3.0f,     4.0f,    // row 0
      0.0f,    0.0f, 0.0f,     0.0f,    // row 1
      1000.0f, 0.0f, -1000.0f, 999.0f,  // row 2
  };
  const std::vector<int> targets = {0, 2, 2};
  std::vector<float> losses(B * T), probs(B * T * V);
  k::softmax_crossentropy_forward(losses.data(), probs.data(), logits.data(), targets.data(), B, T, V);
  // Row 0: -log(e^1 / (e^1+e^2+e^3+e^4)) = log(1+e+e^2+e^3) = 3.4401896985611957
  EXPECT_NEAR(losses[0], 3.4401896985611957, 1e-5);
  EXPECT_NEAR(losses[1], std::log(4.0), 1e-6);  // uniform row
  // Row 2: target logit -1000 is 2000 below the max: loss = 2000 + log(1 + e^-1) finite,
  // although its probability underflows to 0.
  EXPECT_NEAR(losses[2], 2000.0 + std::log1p(std::exp(-1.0)), 1e-3);
  EXPECT_EQ(probs[2 * V + 2], 0.0f);
  for (int n = 0; n < B * T; n++) {
    double sum = 0.0;
    for (int v = 0; v < V; v++) sum += probs[n * V + v];
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
}

TEST(KernelsForward, EncoderAndResidual) {
  constexpr int B = 2, T = 3, C = 4, V = 5;
  const std::vector<int> tokens = {4, 0, 4, 1, 2, 3};
  const std::vector<float> wte = random_vec(V * C, 9), wpe = random_vec(T * C, 10);
  std::vector<float> out(B * T * C);
  k::encoder_forward(out.data(), tokens.data(), wte.data(), wpe.data(), B, T, C);
  for (int b = 0; b < B; b++)
    for (int t = 0; t < T; t++)
      for (int c = 0; c < C; c++) EXPECT_EQ(out[(b * T + t) * C + c], wte[tokens[b * T + t] * C + c] + wpe[t * C + c]);
  const std::vector<float> other = random_vec(out.size(), 11);
  std::vector<float> sum(out.size());
  k::residual_forward(sum.data(), out.data(), other.data(), out.size());
  for (size_t i = 0; i < out.size(); i++) EXPECT_EQ(sum[i], out[i] + other[i]);
}

// The OpenMP kernels partition work so that no two threads write the same element and every
// sum runs in a fixed order: results must be bit-identical for 1 and 3 threads. (The GEMMs are
// left out: OpenBLAS may split K differently per thread count.)
TEST(KernelsForward, ThreadCountIndependent) {
  constexpr int B = 4, T = 16, C = 160, NH = 4, V = 50;  // C: 3 channel blocks of <= 64
  const size_t N = (size_t)B * T;
  const std::vector<float> x = random_vec(N * C, 11);
  std::vector<float> qkv = random_vec(N * 3 * C, 12);
  const std::vector<float> lw = random_vec(C, 13), lb = random_vec(C, 14), dy = random_vec(N * C, 15);
  const std::vector<float> logits = random_vec(N * V, 16, -3.0f, 3.0f);
  std::vector<int> targets(N);
  for (size_t i = 0; i < N; i++) targets[i] = (int)(i % V);

  auto run = [&](int threads) {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(threads);
    std::vector<float> r;
    std::vector<float> y(N * C), mean(N), rstd(N), dx(N * C, 0.0f), dw(C, 0.0f), db(C, 0.0f);
    k::layernorm_forward(y.data(), mean.data(), rstd.data(), x.data(), lw.data(), lb.data(), B, T, C);
    k::layernorm_backward(dx.data(), dw.data(), db.data(), dy.data(), x.data(), lw.data(), mean.data(), rstd.data(), B,
                          T, C);
    std::vector<float> out(N * C), att((size_t)B * NH * T * T), dqkv(N * 3 * C, 0.0f);
    k::attention_forward(out.data(), att.data(), qkv.data(), nullptr, B, T, C, NH);
    k::attention_backward(dqkv.data(), nullptr, dy.data(), qkv.data(), att.data(), B, T, C, NH);
    std::vector<float> losses(N), probs(N * V), dlogits(N * V, 0.0f);
    k::softmax_crossentropy_forward(losses.data(), probs.data(), logits.data(), targets.data(), B, T, V);
    k::softmax_crossentropy_backward(dlogits.data(), probs.data(), targets.data(), 0.1f, B, T, V);
    for (const auto* v : {&y, &dx, &dw, &db, &out, &att, &dqkv, &losses, &dlogits})
      r.insert(r.end(), v->begin(), v->end());
    omp_set_num_threads(saved);
    return r;
  };
  const std::vector<float> one = run(1), three = run(3);
  ASSERT_EQ(one.size(), three.size());
  size_t diff = 0;
  for (size_t i = 0; i < one.size(); i++) diff += one[i] != three[i];
  EXPECT_EQ(diff, 0u);
}

// The single thread knob documented in kernels/blas.hpp: set_blas_threads also sets OpenMP's.
TEST(KernelsBlas, SetThreadsAlsoSetsOpenMP) {
  const int saved = omp_get_max_threads();
  k::set_blas_threads(3);
  EXPECT_EQ(k::blas_threads(), 3);
  EXPECT_EQ(omp_get_max_threads(), 3);
  k::set_blas_threads(1);
  EXPECT_EQ(k::blas_threads(), 1);
  EXPECT_EQ(omp_get_max_threads(), 1);
  k::set_blas_threads(saved);
  EXPECT_NE(k::blas_config().find("OpenBLAS"), std::string::npos) << k::blas_config();
}

// kernels/profile.hpp: a kernel's scope counts its call, time and work only while profiling is on.
TEST(KernelProfile, CountsCallsAndWorkOnlyWhileEnabled) {
  namespace prof = sp::kernels::profile;
  std::vector<float> a(1000, 1.0f), b(1000, 2.0f);
  prof::reset();
  k::residual_forward(a.data(), a.data(), b.data(), a.size());
  EXPECT_TRUE(prof::rows().empty()) << "profiling is off by default";
  prof::set_enabled(true);
  k::residual_forward(a.data(), a.data(), b.data(), a.size());
  k::residual_forward(a.data(), a.data(), b.data(), a.size());
  k::gelu_forward(a.data(), b.data(), a.size());
  prof::set_enabled(false);
  k::residual_forward(a.data(), a.data(), b.data(), a.size());
  const std::vector<prof::Row> rows = prof::rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "gelu_forward");  // by name
  EXPECT_EQ(rows[1].name, "residual_forward");
  EXPECT_EQ(rows[1].calls, 2);
  EXPECT_EQ(rows[1].flops, 2000.0);   // one add per element
  EXPECT_EQ(rows[1].bytes, 24000.0);  // two reads and a write of 4 bytes
  EXPECT_GE(rows[1].seconds, 0.0);
  prof::reset();
  EXPECT_TRUE(prof::rows().empty());
}

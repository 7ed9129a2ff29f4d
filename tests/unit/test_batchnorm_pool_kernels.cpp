// Batch norm, ReLU and pooling of kernels/cnn.hpp: forward passes against direct references
// (batch-norm statistics in double, PyTorch values for pooling), the running-statistics update,
// and finite-difference gradient checks (the convolutions: test_cnn_kernels.cpp).
//
// Gradient checks use the method of test_kernels_gradcheck.cpp (L = sum_i y_i w_i, central
// differences with h = 1e-2, tolerance 1e-3 + 1e-2 |numeric| per element). Pooling is piecewise
// linear, so the central difference is exact up to float rounding; batch norm is smooth (observed
// ~1e-4). Max-pool inputs are a permutation of values 0.05 apart, so no +-h step changes a
// window's argmax.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernels.hpp"
#include "kernels/random_fill.hpp"
#include "tests/lib/gradcheck.hpp"

namespace k = sp::kernels;
using k::random_vec;
using namespace sp::test;  // the gradient-check helpers (tests/lib/gradcheck.hpp)

TEST(BatchNorm, TrainingForwardAndRunningStatistics) {
  const int N = 3, C = 4, HW = 10;
  const std::size_t M = std::size_t(N) * HW;
  auto x = random_vec(std::size_t(N) * C * HW, 1, -2.0f, 3.0f);
  for (std::size_t i = 0; i < x.size(); i++) x[i] += float((i / HW) % C);  // per-channel offsets
  const auto gamma = random_vec(C, 2, 0.5f, 1.5f), beta = random_vec(C, 3);
  std::vector<float> y(x.size()), mean(C), rstd(C), rm = random_vec(C, 4), rv = random_vec(C, 5, 0.5f, 2.0f);
  const auto rm0 = rm, rv0 = rv;
  k::batchnorm_forward_train(y.data(), mean.data(), rstd.data(), rm.data(), rv.data(), x.data(), gamma.data(),
                             beta.data(), N, C, HW);
  for (int c = 0; c < C; c++) {
    double s = 0, ss = 0;
    for (int n = 0; n < N; n++)
      for (int i = 0; i < HW; i++) s += x[(std::size_t(n) * C + c) * HW + i];
    const double m = s / double(M);
    for (int n = 0; n < N; n++)
      for (int i = 0; i < HW; i++) ss += std::pow(x[(std::size_t(n) * C + c) * HW + i] - m, 2);
    const double var = ss / double(M), r = 1.0 / std::sqrt(var + 1e-5);
    EXPECT_NEAR(mean[c], m, 1e-6);
    EXPECT_NEAR(rstd[c], r, 1e-5 * r);
    // PyTorch: momentum 0.1 and the UNBIASED variance in the running estimate.
    EXPECT_NEAR(rm[c], 0.9 * rm0[c] + 0.1 * m, 1e-6);
    EXPECT_NEAR(rv[c], 0.9 * rv0[c] + 0.1 * var * double(M) / double(M - 1), 1e-5);
    EXPECT_GT(std::fabs(var * double(M) / double(M - 1) - var), 1e-3);  // the two differ here
    for (int n = 0; n < N; n++)
      for (int i = 0; i < HW; i++) {
        const std::size_t j = (std::size_t(n) * C + c) * HW + i;
        EXPECT_NEAR(y[j], (x[j] - m) * r * gamma[c] + beta[c], 1e-5);
      }
  }
  // Evaluation mode uses the running statistics and leaves them alone.
  std::vector<float> ye(x.size());
  const auto rm1 = rm, rv1 = rv;
  k::batchnorm_forward_eval(ye.data(), x.data(), gamma.data(), beta.data(), rm.data(), rv.data(), N, C, HW);
  for (std::size_t j = 0; j < x.size(); j++) {
    const int c = int((j / HW) % C);
    EXPECT_NEAR(ye[j], (x[j] - rm[c]) / std::sqrt(rv[c] + 1e-5) * gamma[c] + beta[c], 1e-5);
  }
  EXPECT_EQ(rm, rm1);
  EXPECT_EQ(rv, rv1);
}

TEST(BatchNorm, GradientCheckTrainingMode) {
  const int N = 3, C = 4, HW = 6;
  std::vector<float> x = random_vec(std::size_t(N) * C * HW, 1, -2.0f, 2.0f);
  std::vector<float> gamma = random_vec(C, 2, 0.5f, 1.5f), beta = random_vec(C, 3);
  const std::vector<float> w = random_vec(x.size(), 4);
  std::vector<float> y(x.size()), mean(C), rstd(C);
  auto loss = [&] {
    k::batchnorm_forward_train(y.data(), mean.data(), rstd.data(), nullptr, nullptr, x.data(), gamma.data(),
                               beta.data(), N, C, HW);
    return weighted_sum(y, w);
  };
  loss();  // mean and rstd of the unperturbed input
  expect_backward_matches("batchnorm", {{"dinp", x, 5}, {"dgamma", gamma, 6}, {"dbeta", beta, 7}}, loss, [&](auto& d) {
    k::batchnorm_backward(d[0].data(), d[1].data(), d[2].data(), w.data(), x.data(), gamma.data(), mean.data(),
                          rstd.data(), N, C, HW);
  });
}

// The batch norm with its ReLU in the same pass against the two kernels one after the other:
// bitwise the same output, statistics and running statistics.
TEST(BatchNorm, ReluInTheSamePassEqualsBatchNormThenRelu) {
  const int N = 3, C = 4, HW = 37;  // odd plane: vector tails
  const std::vector<float> x = random_vec(std::size_t(N) * C * HW, 11, -2.0f, 2.0f);
  const std::vector<float> gamma = random_vec(C, 12, 0.5f, 1.5f), beta = random_vec(C, 13);
  std::vector<float> y(x.size()), mean(C), rstd(C), rm(C, 0.0f), rv(C, 1.0f);
  k::batchnorm_forward_train(y.data(), mean.data(), rstd.data(), rm.data(), rv.data(), x.data(), gamma.data(),
                             beta.data(), N, C, HW);
  k::relu_forward(y.data(), y.data(), y.size());
  ASSERT_GT(std::count(y.begin(), y.end(), 0.0f), 0);  // the ReLU matters
  std::vector<float> yf(x.size()), meanf(C), rstdf(C), rmf(C, 0.0f), rvf(C, 1.0f);
  k::batchnorm_relu_forward_train(yf.data(), meanf.data(), rstdf.data(), rmf.data(), rvf.data(), x.data(), gamma.data(),
                                  beta.data(), N, C, HW);
  EXPECT_EQ(yf, y);
  EXPECT_EQ(meanf, mean);
  EXPECT_EQ(rstdf, rstd);
  EXPECT_EQ(rmf, rm);
  EXPECT_EQ(rvf, rv);
}

// A block's end in one pass against the three kernels one after the other: bitwise the same
// block output and statistics, written over the shortcut's buffer as the trainer may.
TEST(BatchNorm, ShortcutAddAndReluInTheSamePassEqualTheThreeKernels) {
  const int N = 3, C = 4, HW = 37;
  const std::vector<float> x = random_vec(std::size_t(N) * C * HW, 21, -2.0f, 2.0f);
  const std::vector<float> shortcut = random_vec(x.size(), 22, -1.0f, 1.0f);
  const std::vector<float> gamma = random_vec(C, 23, 0.5f, 1.5f), beta = random_vec(C, 24);
  std::vector<float> bn(x.size()), y(x.size()), mean(C), rstd(C), rm(C, 0.0f), rv(C, 1.0f);
  k::batchnorm_forward_train(bn.data(), mean.data(), rstd.data(), rm.data(), rv.data(), x.data(), gamma.data(),
                             beta.data(), N, C, HW);
  k::residual_forward(y.data(), bn.data(), shortcut.data(), y.size());
  k::relu_forward(y.data(), y.data(), y.size());
  ASSERT_GT(std::count(y.begin(), y.end(), 0.0f), 0);  // the ReLU matters
  std::vector<float> yf = shortcut, meanf(C), rstdf(C), rmf(C, 0.0f), rvf(C, 1.0f);
  k::batchnorm_add_relu_forward_train(yf.data(), meanf.data(), rstdf.data(), rmf.data(), rvf.data(), x.data(),
                                      yf.data(), gamma.data(), beta.data(), N, C, HW);
  EXPECT_EQ(yf, y);
  EXPECT_EQ(meanf, mean);
  EXPECT_EQ(rstdf, rstd);
  EXPECT_EQ(rmf, rm);
  EXPECT_EQ(rvf, rv);
}

// The backward with the ReLU's mask in the pass of its sums against relu_backward_inplace and
// batchnorm_backward: bitwise the same input, gamma and beta gradients and masked dout, with
// dinp accumulated or written.
TEST(BatchNorm, ReluMaskInTheBackwardPassEqualsReluThenBatchNormBackward) {
  const int N = 3, C = 4, HW = 37;
  const std::vector<float> x = random_vec(std::size_t(N) * C * HW, 31, -2.0f, 2.0f);
  const std::vector<float> gamma = random_vec(C, 32, 0.5f, 1.5f), beta = random_vec(C, 33);
  const std::vector<float> dy = random_vec(x.size(), 34), dinp0 = random_vec(x.size(), 35);
  std::vector<float> y(x.size()), mean(C), rstd(C);
  k::batchnorm_relu_forward_train(y.data(), mean.data(), rstd.data(), nullptr, nullptr, x.data(), gamma.data(),
                                  beta.data(), N, C, HW);
  ASSERT_GT(std::count(y.begin(), y.end(), 0.0f), 0);  // the mask matters
  for (const bool accumulate : {false, true}) {
    std::vector<float> d = dy, dinp = dinp0, dgamma(C, 0.5f), dbeta(C, 0.25f);
    k::relu_backward_inplace(d.data(), y.data(), d.size());
    k::batchnorm_backward(dinp.data(), dgamma.data(), dbeta.data(), d.data(), x.data(), gamma.data(), mean.data(),
                          rstd.data(), N, C, HW, accumulate);
    std::vector<float> df = dy, dinpf = dinp0, dgammaf(C, 0.5f), dbetaf(C, 0.25f);
    k::batchnorm_relu_backward(dinpf.data(), dgammaf.data(), dbetaf.data(), df.data(), y.data(), x.data(), gamma.data(),
                               mean.data(), rstd.data(), N, C, HW, accumulate);
    EXPECT_EQ(df, d) << "accumulate " << accumulate;
    EXPECT_EQ(dinpf, dinp) << "accumulate " << accumulate;
    EXPECT_EQ(dgammaf, dgamma) << "accumulate " << accumulate;
    EXPECT_EQ(dbetaf, dbeta) << "accumulate " << accumulate;
  }
}

TEST(Relu, ForwardBackwardAndInPlace) {
  const std::vector<float> x = {-2.0f, -0.0f, 0.0f, 0.5f, 3.0f};
  const std::vector<float> dy = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f};
  std::vector<float> y(5);
  k::relu_forward(y.data(), x.data(), 5);
  EXPECT_EQ(y, (std::vector<float>{0.0f, 0.0f, 0.0f, 0.5f, 3.0f}));
  std::vector<float> dx_in(5, 1.0f), dx_out(5, 1.0f);
  k::relu_backward(dx_in.data(), x.data(), dy.data(), 5);   // from the input
  k::relu_backward(dx_out.data(), y.data(), dy.data(), 5);  // from the output: same mask
  EXPECT_EQ(dx_in, (std::vector<float>{1.0f, 1.0f, 1.0f, 5.0f, 6.0f}));
  EXPECT_EQ(dx_out, dx_in);
  std::vector<float> d = dy;
  k::relu_backward_inplace(d.data(), y.data(), 5);
  EXPECT_EQ(d, (std::vector<float>{0.0f, 0.0f, 0.0f, 4.0f, 5.0f}));
}

TEST(Pool, ForwardMatchesPyTorch) {
  // Values from torch.nn.functional.{avg,max}_pool2d (torch 1.13) on the same 4x5 inputs.
  std::vector<float> x(20);
  std::iota(x.begin(), x.end(), 1.0f);
  k::Pool2dShape s{1, 1, 4, 5, 3, 2, 1};
  std::vector<float> y(6);
  k::avgpool2d_forward(y.data(), x.data(), s);
  const std::vector<float> avg = {1.7777778f, 3.6666667f, 3.1111112f, 7.6666665f, 13.0f, 9.666667f};
  for (int i = 0; i < 6; i++) EXPECT_NEAR(y[i], avg[i], 1e-6) << i;
  k::Pool2dShape s2{1, 1, 4, 5, 2, 1, 1};  // windows clipped by the padded border
  std::vector<float> y2(30);
  k::avgpool2d_forward(y2.data(), x.data(), s2);
  EXPECT_FLOAT_EQ(y2[0], 0.25f);
  EXPECT_FLOAT_EQ(y2[5], 1.25f);
  EXPECT_FLOAT_EQ(y2[29], 5.0f);
  const std::vector<float> xm = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4};
  std::vector<int> am(6);
  k::maxpool2d_forward(y.data(), am.data(), xm.data(), s);
  EXPECT_EQ(y, (std::vector<float>{9, 6, 5, 9, 9, 9}));
  EXPECT_EQ(am, (std::vector<int>{5, 7, 4, 5, 12, 14}));  // first maximum wins ties, as PyTorch
  std::vector<float> gp(2);
  k::global_avgpool_forward(gp.data(), x.data(), 2, 1, 10);
  EXPECT_FLOAT_EQ(gp[0], 5.5f);
  EXPECT_FLOAT_EQ(gp[1], 15.5f);
}

TEST(Pool, GradientChecks) {
  for (const k::Pool2dShape& s : {k::Pool2dShape{2, 3, 6, 5, 3, 2, 1}, k::Pool2dShape{2, 3, 6, 4, 2, 2, 0},
                                  k::Pool2dShape{1, 2, 5, 5, 3, 1, 1}}) {
    char name[32];  // (a char buffer: GCC 12 warns falsely on "literal" + std::string here)
    std::snprintf(name, sizeof name, "K%d s%d p%d", s.K, s.stride, s.pad);
    const std::size_t nin = std::size_t(s.N) * s.C * s.H * s.W, nout = std::size_t(s.N) * s.C * s.out_h() * s.out_w();
    const std::vector<float> w = random_vec(nout, 1);
    std::vector<float> y(nout);
    std::vector<int> am(nout);
    // Max pool: well-separated values (a shuffled ramp, 0.05 apart) so +-h keeps every argmax.
    std::vector<float> x(nin);
    for (std::size_t i = 0; i < nin; i++) x[i] = 0.05f * float(i) - 2.0f;
    std::shuffle(x.begin(), x.end(), std::mt19937(7));
    auto max_loss = [&] {
      k::maxpool2d_forward(y.data(), am.data(), x.data(), s);
      return weighted_sum(y, w);
    };
    max_loss();
    const auto dx0 = random_vec(nin, 2);
    auto dx = dx0;
    k::maxpool2d_backward(dx.data(), w.data(), am.data(), s);
    EXPECT_TRUE(grads_match(std::string("maxpool ") + name, added(dx, dx0), numeric_grad(x, max_loss)));

    x = random_vec(nin, 3);
    auto avg_loss = [&] {
      k::avgpool2d_forward(y.data(), x.data(), s);
      return weighted_sum(y, w);
    };
    dx = dx0;
    k::avgpool2d_backward(dx.data(), w.data(), s);
    EXPECT_TRUE(grads_match(std::string("avgpool ") + name, added(dx, dx0), numeric_grad(x, avg_loss)));
  }
  const int N = 2, C = 3, HW = 7;
  std::vector<float> x = random_vec(std::size_t(N) * C * HW, 4), y(N * C);
  const std::vector<float> w = random_vec(N * C, 5);
  auto loss = [&] {
    k::global_avgpool_forward(y.data(), x.data(), N, C, HW);
    return weighted_sum(y, w);
  };
  const auto dx0 = random_vec(x.size(), 6);
  auto dx = dx0;
  k::global_avgpool_backward(dx.data(), w.data(), N, C, HW);
  EXPECT_TRUE(grads_match("global avgpool", added(dx, dx0), numeric_grad(x, loss)));
}

// Single optimizer steps against values computed by hand (in double, from the formulas in
// kernels/optim.hpp). Tolerance 1e-6: a handful of float operations on O(1) numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/kernels.hpp"

namespace k = sp::kernels;

TEST(Optim, AdamWFirstStep) {
  // p = 1, g = 0.5, lr = 0.1, wd = 0.01, defaults beta1 = 0.9, beta2 = 0.999, eps = 1e-8.
  // m = 0.1 * 0.5 = 0.05, v = 0.001 * 0.25 = 2.5e-4; m_hat = 0.5, v_hat = 0.25 (step 1)
  // p = 1 - 0.1 * (0.5 / (0.5 + 1e-8) + 0.01 * 1) = 0.899000002
  k::AdamWConfig cfg;
  cfg.lr = 0.1f;
  cfg.weight_decay = 0.01f;
  float p = 1.0f, g = 0.5f, m = 0.0f, v = 0.0f;
  k::adamw_update(&p, &g, &m, &v, 1, cfg, 1);
  EXPECT_NEAR(p, 0.899000002, 1e-6);
  EXPECT_NEAR(m, 0.05, 1e-7);
  // 1 - beta2 is formed in float: 0.999f is not exact, so 1 - 0.999f = 0.00099998713 is off by
  // 1.3e-5 relative. Hence a relative tolerance of 1e-4 here.
  EXPECT_NEAR(v, 2.5e-4, 2.5e-8);
}

TEST(Optim, AdamWThirdStepWithState) {
  // p = -0.7, g = -0.3, m0 = 0.2, v0 = 0.05, step 3, lr = 0.1, wd = 0.01.
  // m = 0.9*0.2 + 0.1*(-0.3) = 0.15;  v = 0.999*0.05 + 0.001*0.09 = 0.05004
  // m_hat = 0.15 / (1 - 0.9^3) = 0.15 / 0.271 = 0.55350554
  // v_hat = 0.05004 / (1 - 0.999^3) = 0.05004 / 0.002997001 = 16.696691
  // p = -0.7 - 0.1 * (0.55350554 / (4.0861585 + 1e-8) + 0.01 * (-0.7)) = -0.71284587
  k::AdamWConfig cfg;
  cfg.lr = 0.1f;
  cfg.weight_decay = 0.01f;
  // Two elements in one call: the second (zero gradient, zero state, wd 0.01) only decays.
  std::vector<float> p = {-0.7f, 2.0f}, g = {-0.3f, 0.0f}, m = {0.2f, 0.0f}, v = {0.05f, 0.0f};
  k::adamw_update(p.data(), g.data(), m.data(), v.data(), 2, cfg, 3);
  EXPECT_NEAR(p[0], -0.7128458655453203, 1e-6);
  EXPECT_NEAR(m[0], 0.15, 1e-7);
  EXPECT_NEAR(v[0], 0.05004, 1e-8);
  EXPECT_NEAR(p[1], 2.0 - 0.1 * 0.01 * 2.0, 1e-6);  // 1.998: decoupled decay, no Adam term
}

namespace {
// One sgd_update on a single element p = 1, g = 0.5 with lr = 0.1, wd = 0.01 (so the decayed
// gradient is g' = 0.5 + 0.01 * 1 = 0.51), starting from momentum buffer buf0.
struct SgdResult {
  float p, buf;
};
SgdResult sgd_once(float momentum, float dampening, bool nesterov, float buf0, long step) {
  k::SGDConfig cfg;
  cfg.lr = 0.1f;
  cfg.weight_decay = 0.01f;
  cfg.momentum = momentum;
  cfg.dampening = dampening;
  cfg.nesterov = nesterov;
  float p = 1.0f, g = 0.5f, buf = buf0;
  k::sgd_update(&p, &g, &buf, 1, cfg, step);
  return {p, buf};
}
// sgd_once leaves the buffer at buf and the parameter at p (each within 1e-6).
::testing::AssertionResult sgd_once_gives(float momentum, float dampening, bool nesterov, float buf0, long step,
                                          double buf, double p) {
  const SgdResult r = sgd_once(momentum, dampening, nesterov, buf0, step);
  if (std::fabs(r.buf - buf) <= 1e-6 && std::fabs(r.p - p) <= 1e-6) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "buffer " << r.buf << " (expected " << buf << "), parameter " << r.p
                                       << " (expected " << p << ")";
}
}  // namespace

TEST(Optim, SgdPlain) {
  // p = 1 - 0.1 * 0.51 = 0.949; the buffer is not touched without momentum.
  const SgdResult r = sgd_once(0.0f, 0.0f, false, 7.0f, 5);
  EXPECT_NEAR(r.p, 0.949, 1e-6);
  EXPECT_EQ(r.buf, 7.0f);
  float p = 1.0f, g = 0.5f;  // and a null buffer is fine
  k::SGDConfig cfg;
  cfg.lr = 0.1f;
  cfg.weight_decay = 0.01f;
  k::sgd_update(&p, &g, nullptr, 1, cfg, 1);
  EXPECT_NEAR(p, 0.949, 1e-6);
}

TEST(Optim, SgdMomentumFirstStepIgnoresBuffer) {
  // Step 1 (PyTorch): buf = g' = 0.51 whatever the buffer held; p = 1 - 0.1 * 0.51 = 0.949.
  EXPECT_TRUE(sgd_once_gives(0.9f, 0.0f, false, 123.0f, 1, 0.51, 0.949));
}

TEST(Optim, SgdMomentumLaterStep) {
  // buf = 0.9 * 0.2 + 0.51 = 0.69; p = 1 - 0.1 * 0.69 = 0.931
  EXPECT_TRUE(sgd_once_gives(0.9f, 0.0f, false, 0.2f, 2, 0.69, 0.931));
}

TEST(Optim, SgdNesterov) {
  // buf = 0.69 as above; update = g' + 0.9 * buf = 0.51 + 0.621 = 1.131; p = 1 - 0.1131 = 0.8869
  EXPECT_TRUE(sgd_once_gives(0.9f, 0.0f, true, 0.2f, 2, 0.69, 0.8869));
  // Step 1: buf = 0.51, update = 0.51 + 0.9 * 0.51 = 0.969, p = 0.9031
  EXPECT_TRUE(sgd_once_gives(0.9f, 0.0f, true, -5.0f, 1, 0.51, 0.9031));
}

TEST(Optim, SgdDampening) {
  // buf = 0.9 * 0.2 + (1 - 0.5) * 0.51 = 0.435; p = 1 - 0.0435 = 0.9565
  EXPECT_TRUE(sgd_once_gives(0.9f, 0.5f, false, 0.2f, 2, 0.435, 0.9565));
}

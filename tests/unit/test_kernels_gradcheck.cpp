// Finite-difference gradient checks for every backward kernel in sp::kernels.
//
// Method. For a kernel y = f(x1, x2, ...) take the scalar L = sum_i y_i * w_i with fixed random
// weights w, so dL/dy = w. The analytic gradient is what <layer>_backward adds with dout = w;
// gradient buffers start filled with random values and we subtract them afterwards, which also
// checks the accumulate (+=) contract. The numeric gradient is the central difference
//     dL/dx_j ~= (L(x_j + h) - L(x_j - h)) / ((x_j + h) - (x_j - h)),
// with the denominator taken from the float values actually stored.
//
// Precision and tolerance. The kernels are float-only, so the forward passes run in float, but
// L is summed in double. Outputs that do not depend on x_j come out bit-identical in both runs
// (same code, same inputs, one thread) and cancel exactly, so only the O(1)-sized outputs that
// do depend on x_j contribute rounding noise: about u * |y| * sqrt(#affected) / (2h) with
// u = 2^-24, i.e. ~1e-5 for h = 1e-2. Truncation error of the central difference is
// h^2/6 * |f'''| ~ 2e-5 * |f'''| for these smooth functions (inputs are O(1)). We accept
//     |analytic - numeric| <= 1e-3 + 1e-2 * |numeric|   for every element,
// at least 10x the errors observed (max abs error is printed per tensor; the largest is 1.1e-4,
// layernorm dinp) and far below the O(|gradient|) error of a wrong formula (a missing term,
// factor or index: each such mutation of the kernels was seen to fail these tests).
// CatchesWrongGradient checks that the checker rejects a 5% error in a single element.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernels.hpp"
#include "kernels/random_fill.hpp"
#include "tests/lib/gradcheck.hpp"

namespace k = sp::kernels;

namespace {

// Small shapes; odd sizes catch transposed or mixed-up indices.
constexpr int B = 2, T = 5, C = 8, NH = 2, V = 11, OC = 7;
constexpr size_t BT = (size_t)B * T;

using sp::kernels::random_vec;

using namespace sp::test;  // the gradient-check helpers (tests/lib/gradcheck.hpp)

}  // namespace

TEST(GradCheck, CatchesWrongGradient) {
  std::vector<float> x = random_vec(20, 1, -3.0f, 3.0f);
  const std::vector<float> w = random_vec(20, 2);
  std::vector<float> y(20);
  auto loss = [&] {
    k::gelu_forward(y.data(), x.data(), x.size());
    return weighted_sum(y, w);
  };
  std::vector<float> dx(20, 0.0f);
  k::gelu_backward(dx.data(), x.data(), w.data(), x.size());
  const std::vector<double> num = numeric_grad(x, loss);
  ASSERT_TRUE(grads_match("gelu (control)", dx, num));
  // Pick an element with a sizeable gradient and make it 5% wrong.
  size_t j = 0;
  for (size_t i = 0; i < dx.size(); i++) j = std::fabs(dx[i]) > std::fabs(dx[j]) ? i : j;
  dx[j] *= 1.05f;
  EXPECT_FALSE(grads_match("gelu (5% off, expected to fail)", dx, num));
}

TEST(GradCheck, MatmulWithBias) {
  std::vector<float> inp = random_vec(BT * C, 10), weight = random_vec((size_t)OC * C, 11);
  std::vector<float> bias = random_vec(OC, 12);
  const std::vector<float> w = random_vec(BT * OC, 13);
  std::vector<float> out(BT * OC);
  auto loss = [&] {
    k::matmul_forward(out.data(), inp.data(), weight.data(), bias.data(), B, T, C, OC);
    return weighted_sum(out, w);
  };
  expect_backward_matches(
      "matmul", {{"dinp", inp, 14}, {"dweight", weight, 15}, {"dbias", bias, 16}}, loss, [&](auto& d) {
        k::matmul_backward(d[0].data(), d[1].data(), d[2].data(), w.data(), inp.data(), weight.data(), B, T, C, OC);
      });
}

TEST(GradCheck, MatmulWithoutBiasAndWithoutDinp) {
  std::vector<float> inp = random_vec(BT * C, 20), weight = random_vec((size_t)OC * C, 21);
  const std::vector<float> w = random_vec(BT * OC, 22);
  std::vector<float> out(BT * OC);
  auto loss = [&] {
    k::matmul_forward(out.data(), inp.data(), weight.data(), nullptr, B, T, C, OC);
    return weighted_sum(out, w);
  };
  const std::vector<float> dw0 = random_vec(weight.size(), 23);
  std::vector<float> dw = dw0;
  k::matmul_backward(nullptr, dw.data(), nullptr, w.data(), inp.data(), weight.data(), B, T, C, OC);
  EXPECT_TRUE(grads_match("matmul(no bias) dweight", added(dw, dw0), numeric_grad(weight, loss)));
}

TEST(GradCheck, Encoder) {
  constexpr int maxT = T + 2;  // rows T..maxT-1 of wpe are unused: their gradient must stay 0
  std::vector<int> tokens(BT);
  for (size_t i = 0; i < BT; i++) tokens[i] = (int)((i * 7 + 3) % V);
  tokens[BT - 1] = tokens[0];  // a repeated token: its dwte row must get both contributions
  tokens[BT - 2] = tokens[0];
  std::vector<float> wte = random_vec((size_t)V * C, 30), wpe = random_vec((size_t)maxT * C, 31);
  const std::vector<float> w = random_vec(BT * C, 32);
  std::vector<float> out(BT * C);
  auto loss = [&] {
    k::encoder_forward(out.data(), tokens.data(), wte.data(), wpe.data(), B, T, C);
    return weighted_sum(out, w);
  };
  expect_backward_matches("encoder", {{"dwte", wte, 33}, {"dwpe", wpe, 34}}, loss, [&](auto& d) {
    k::encoder_backward(d[0].data(), d[1].data(), w.data(), tokens.data(), B, T, C);
  });
}

TEST(GradCheck, Layernorm) {
  std::vector<float> inp = random_vec(BT * C, 40, -0.5f, 1.5f);  // non-zero mean
  std::vector<float> weight = random_vec(C, 41, 0.5f, 1.5f), bias = random_vec(C, 42);
  const std::vector<float> w = random_vec(BT * C, 43);
  std::vector<float> out(BT * C), mean(BT), rstd(BT);
  auto loss = [&] {
    k::layernorm_forward(out.data(), mean.data(), rstd.data(), inp.data(), weight.data(), bias.data(), B, T, C);
    return weighted_sum(out, w);
  };
  loss();  // mean and rstd of the unperturbed input, for the backward
  expect_backward_matches("layernorm", {{"dinp", inp, 44}, {"dweight", weight, 45}, {"dbias", bias, 46}}, loss,
                          [&](auto& d) {
                            k::layernorm_backward(d[0].data(), d[1].data(), d[2].data(), w.data(), inp.data(),
                                                  weight.data(), mean.data(), rstd.data(), B, T, C);
                          });
}

TEST(GradCheck, Gelu) {
  std::vector<float> inp = random_vec(BT * 4 * C, 50, -4.0f, 4.0f);  // covers both tails
  const std::vector<float> w = random_vec(inp.size(), 51);
  std::vector<float> out(inp.size());
  auto loss = [&] {
    k::gelu_forward(out.data(), inp.data(), inp.size());
    return weighted_sum(out, w);
  };
  const std::vector<float> dinp0 = random_vec(inp.size(), 52);
  std::vector<float> dinp = dinp0;
  k::gelu_backward(dinp.data(), inp.data(), w.data(), inp.size());
  EXPECT_TRUE(grads_match("gelu dinp", added(dinp, dinp0), numeric_grad(inp, loss)));
}

// Row blocks of 2 at T = 5 (blocks of 2, 2, 1: each stops at its last key) and one block of T.
TEST(GradCheck, Attention) {
  for (const int row_block : {2, T}) {
    std::vector<float> qkv = random_vec(BT * 3 * C, 60, -2.0f, 2.0f);  // peaked softmax rows
    const std::vector<float> w = random_vec(BT * C, 61);
    std::vector<float> out(BT * C), att((size_t)B * NH * T * T);
    auto loss = [&] {
      k::attention_forward(out.data(), att.data(), qkv.data(), nullptr, B, T, C, NH, row_block);
      return weighted_sum(out, w);
    };
    loss();  // att of the unperturbed input, for the backward
    const std::vector<float> dqkv0 = random_vec(qkv.size(), 62);
    std::vector<float> dqkv = dqkv0;
    k::attention_backward(dqkv.data(), nullptr, w.data(), qkv.data(), att.data(), B, T, C, NH, true, row_block);
    EXPECT_TRUE(grads_match("attention dqkv, row block " + std::to_string(row_block), added(dqkv, dqkv0),
                            numeric_grad(qkv, loss)));
  }
}

TEST(GradCheck, SoftmaxCrossEntropy) {
  std::vector<float> logits = random_vec(BT * V, 70, -3.0f, 3.0f);
  std::vector<int> targets(BT);
  for (size_t i = 0; i < BT; i++) targets[i] = (int)((i * 5 + 2) % V);
  // Any scale works; not 1 (so it must be applied) and not the trainer's 1/(B*T) = 0.1, which
  // would shrink the gradients (~dloss/V) towards the absolute tolerance.
  const float dloss = 0.7f;
  std::vector<float> losses(BT), probs(BT * V);
  auto loss = [&] {  // L = dloss * sum(losses)
    k::softmax_crossentropy_forward(losses.data(), probs.data(), logits.data(), targets.data(), B, T, V);
    double s = 0.0;
    for (float l : losses) s += l;
    return (double)dloss * s;
  };
  loss();  // probs of the unperturbed logits, for the backward
  const std::vector<float> dlogits0 = random_vec(logits.size(), 71);
  std::vector<float> dlogits = dlogits0;
  k::softmax_crossentropy_backward(dlogits.data(), probs.data(), targets.data(), dloss, B, T, V);
  EXPECT_TRUE(grads_match("crossentropy dlogits", added(dlogits, dlogits0), numeric_grad(logits, loss)));
}

TEST(GradCheck, Residual) {
  std::vector<float> a = random_vec(BT * C, 80), b = random_vec(BT * C, 81);
  const std::vector<float> w = random_vec(BT * C, 82);
  std::vector<float> out(BT * C);
  auto loss = [&] {
    k::residual_forward(out.data(), a.data(), b.data(), out.size());
    return weighted_sum(out, w);
  };
  expect_backward_matches("residual", {{"da", a, 83}, {"db", b, 84}}, loss,
                          [&](auto& d) { k::residual_backward(d[0].data(), d[1].data(), w.data(), out.size()); });
}

// The write mode (accumulate false) of the kernels that have one: onto a buffer of NaNs it must
// give bitwise what the accumulate mode gives onto zeros (a kernel that read the old value, or
// left an element unwritten, leaves a NaN). The GPT backward relies on it instead of zeroing.
TEST(GradCheck, WriteModeEqualsAccumulateOntoZero) {
  const float nan = std::nanf("");
  auto same = [&](const char* what, const std::function<void(float*, bool)>& backward, size_t n) {
    std::vector<float> onto_zero(n, 0.0f), written(n, nan);
    backward(onto_zero.data(), true);
    backward(written.data(), false);
    size_t differ = 0;
    for (size_t i = 0; i < n; i++) differ += !(written[i] == onto_zero[i]);  // NaN differs
    EXPECT_EQ(differ, 0u) << what;
  };
  const auto inp = random_vec(BT * C, 90), weight = random_vec((size_t)OC * C, 91), dout = random_vec(BT * OC, 92);
  same(
      "matmul dinp",
      [&](float* dinp, bool acc) {
        std::vector<float> dw(weight.size(), 0.0f);
        k::matmul_backward(dinp, dw.data(), nullptr, dout.data(), inp.data(), weight.data(), B, T, C, OC, acc);
      },
      BT * C);
  const auto x = random_vec(BT * 4 * C, 93, -4.0f, 4.0f), dy = random_vec(x.size(), 94);
  same(
      "gelu dinp", [&](float* d, bool acc) { k::gelu_backward(d, x.data(), dy.data(), x.size(), acc); }, x.size());
  auto qkv = random_vec(BT * 3 * C, 95, -2.0f, 2.0f);
  const auto datt = random_vec(BT * C, 96);
  std::vector<float> out(BT * C), att((size_t)B * NH * T * T);
  k::attention_forward(out.data(), att.data(), qkv.data(), nullptr, B, T, C, NH);
  same(
      "attention dqkv",
      [&](float* d, bool acc) {
        k::attention_backward(d, nullptr, datt.data(), qkv.data(), att.data(), B, T, C, NH, acc);
      },
      qkv.size());
  same(
      "attention dqkv, row blocks of 2",
      [&](float* d, bool acc) {
        k::attention_backward(d, nullptr, datt.data(), qkv.data(), att.data(), B, T, C, NH, acc, 2);
      },
      qkv.size());
  std::vector<int> targets(BT);
  for (size_t i = 0; i < BT; i++) targets[i] = (int)((i * 3 + 1) % V);
  const auto probs = random_vec(BT * V, 97, 0.0f, 1.0f);
  same(
      "crossentropy dlogits",
      [&](float* d, bool acc) {
        k::softmax_crossentropy_backward(d, probs.data(), targets.data(), 0.5f, B, T, V, acc);
      },
      BT * V);
  const auto dres = random_vec(BT * C, 98);
  same(
      "residual da",
      [&](float* d, bool acc) {
        std::vector<float> db(BT * C, 0.0f);
        k::residual_backward(d, db.data(), dres.data(), BT * C, acc);
      },
      BT * C);
  same(
      "residual db",
      [&](float* d, bool acc) {
        std::vector<float> da(BT * C, 0.0f);
        k::residual_backward(da.data(), d, dres.data(), BT * C, acc);
      },
      BT * C);
}

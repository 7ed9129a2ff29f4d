// The convolution kernels of kernels/cnn.hpp: forward passes against a direct reference (a 7-loop
// convolution in double), thread-count independence, the direct path against the reference on
// ResNet shapes, and finite-difference gradient checks (batch norm, ReLU and pooling:
// test_batchnorm_pool_kernels.cpp).
//
// Gradient checks use the method of test_kernels_gradcheck.cpp: L = sum_i y_i w_i with fixed
// random w (so dout = w), float forward passes, L summed in double, central differences with
// h = 1e-2 and the denominator from the stored floats; gradient buffers start random so the
// accumulate (+=) contract is checked too. Tolerance per element: 1e-3 + 1e-2 |numeric|.
// Convolution is linear in each input, so the central difference is exact up to float rounding
// (observed max errors ~1e-5). CatchesWrongGradient shows a 5% error in one element fails.
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

namespace {

using namespace sp::test;  // the gradient-check helpers (tests/lib/gradcheck.hpp)

// Direct convolution in double: the definition in cnn.hpp, seven loops.
std::vector<double> conv_direct(const std::vector<float>& x, const std::vector<float>& w, const float* bias,
                                const k::Conv2dShape& s) {
  const int OH = s.out_h(), OW = s.out_w();
  std::vector<double> y(std::size_t(s.N) * s.OC * OH * OW);
  for (int n = 0; n < s.N; n++)
    for (int o = 0; o < s.OC; o++)
      for (int oy = 0; oy < OH; oy++)
        for (int ox = 0; ox < OW; ox++) {
          double acc = bias ? bias[o] : 0.0;
          for (int c = 0; c < s.C; c++)
            for (int i = 0; i < s.KH; i++)
              for (int j = 0; j < s.KW; j++) {
                const int iy = oy * s.stride - s.pad + i, ix = ox * s.stride - s.pad + j;
                if (iy < 0 || iy >= s.H || ix < 0 || ix >= s.W) continue;
                acc += double(w[((std::size_t(o) * s.C + c) * s.KH + i) * s.KW + j]) *
                       x[((std::size_t(n) * s.C + c) * s.H + iy) * s.W + ix];
              }
          y[((std::size_t(n) * s.OC + o) * OH + oy) * OW + ox] = acc;
        }
  return y;
}

k::Conv2dShape conv(int N, int C, int H, int W, int OC, int KH, int KW, int stride, int pad) {
  k::Conv2dShape s;
  s.N = N;
  s.C = C;
  s.H = H;
  s.W = W;
  s.OC = OC;
  s.KH = KH;
  s.KW = KW;
  s.stride = stride;
  s.pad = pad;
  return s;
}

std::string conv_name(const k::Conv2dShape& s) {
  return "conv " + std::to_string(s.KH) + "x" + std::to_string(s.KW) + " s" + std::to_string(s.stride) + " p" +
         std::to_string(s.pad) + " " + std::to_string(s.H) + "x" + std::to_string(s.W);
}

// Shapes: 3x3 stride 1/2 pad 0/1, non-square kernels and images, 1x1 (the pointwise fast path)
// and the 1x1 stride-2 projection shortcut.
const std::vector<k::Conv2dShape> kConvShapes = {conv(2, 3, 6, 5, 4, 3, 3, 1, 1), conv(2, 3, 6, 5, 4, 3, 3, 1, 0),
                                                 conv(2, 3, 7, 6, 4, 3, 3, 2, 1), conv(2, 3, 7, 6, 4, 3, 3, 2, 0),
                                                 conv(2, 2, 7, 5, 3, 3, 2, 2, 1), conv(1, 2, 5, 8, 3, 2, 5, 1, 2),
                                                 conv(2, 4, 5, 4, 3, 1, 1, 1, 0), conv(2, 4, 6, 5, 3, 1, 1, 2, 0)};

}  // namespace

TEST(CnnGradCheck, CatchesWrongGradient) {
  const k::Conv2dShape s = conv(1, 2, 5, 4, 2, 3, 3, 1, 1);
  std::vector<float> x = random_vec(std::size_t(s.N) * s.C * s.H * s.W, 1);
  const std::vector<float> wt = random_vec(std::size_t(s.OC) * s.C * 9, 2);
  const std::vector<float> w = random_vec(std::size_t(s.N) * s.OC * s.out_h() * s.out_w(), 3);
  std::vector<float> y(w.size()), dx(x.size(), 0.0f), dwt(wt.size(), 0.0f);
  auto loss = [&] {
    k::conv2d_forward(y.data(), x.data(), wt.data(), nullptr, s);
    return weighted_sum(y, w);
  };
  k::conv2d_backward(dx.data(), dwt.data(), nullptr, w.data(), x.data(), wt.data(), s);
  const std::vector<double> num = numeric_grad(x, loss);
  ASSERT_TRUE(grads_match("conv dinp (control)", dx, num));
  std::size_t j = 0;
  for (std::size_t i = 0; i < dx.size(); i++) j = std::fabs(dx[i]) > std::fabs(dx[j]) ? i : j;
  dx[j] *= 1.05f;
  EXPECT_FALSE(grads_match("conv dinp (5% off, expected to fail)", dx, num));
}

TEST(Conv2d, ForwardMatchesDirectConvolution) {
  unsigned seed = 100;
  for (const k::Conv2dShape& s : kConvShapes) {
    for (bool with_bias : {false, true}) {
      const auto x = random_vec(std::size_t(s.N) * s.C * s.H * s.W, seed++);
      const auto wt = random_vec(std::size_t(s.OC) * s.C * s.KH * s.KW, seed++);
      const auto b = random_vec(s.OC, seed++);
      std::vector<float> y(std::size_t(s.N) * s.OC * s.out_h() * s.out_w(), 12345.0f);
      k::conv2d_forward(y.data(), x.data(), wt.data(), with_bias ? b.data() : nullptr, s);
      const auto ref = conv_direct(x, wt, with_bias ? b.data() : nullptr, s);
      double max_err = 0.0;
      for (std::size_t i = 0; i < y.size(); i++) max_err = std::max(max_err, std::fabs(y[i] - ref[i]));
      EXPECT_LT(max_err, 1e-5) << conv_name(s) << (with_bias ? " with bias" : "");
    }
  }
}

TEST(Conv2d, GradientCheck) {
  unsigned seed = 200;
  for (const k::Conv2dShape& s : kConvShapes) {
    std::vector<float> x = random_vec(std::size_t(s.N) * s.C * s.H * s.W, seed++);
    std::vector<float> wt = random_vec(std::size_t(s.OC) * s.C * s.KH * s.KW, seed++);
    std::vector<float> b = random_vec(s.OC, seed++);
    const std::vector<float> w = random_vec(std::size_t(s.N) * s.OC * s.out_h() * s.out_w(), seed++);
    std::vector<float> y(w.size());
    auto loss = [&] {
      k::conv2d_forward(y.data(), x.data(), wt.data(), b.data(), s);
      return weighted_sum(y, w);
    };
    const auto dx0 = random_vec(x.size(), seed++), dw0 = random_vec(wt.size(), seed++),
               db0 = random_vec(b.size(), seed++);
    auto dx = dx0, dw = dw0, db = db0;
    k::conv2d_backward(dx.data(), dw.data(), db.data(), w.data(), x.data(), wt.data(), s);
    const std::string name = conv_name(s);
    EXPECT_TRUE(grads_match(name + " dinp", added(dx, dx0), numeric_grad(x, loss)));
    EXPECT_TRUE(grads_match(name + " dweight", added(dw, dw0), numeric_grad(wt, loss)));
    EXPECT_TRUE(grads_match(name + " dbias", added(db, db0), numeric_grad(b, loss)));
    // dinp == nullptr skips the input gradient and leaves dweight's result unchanged.
    auto dw2 = dw0;
    k::conv2d_backward(nullptr, dw2.data(), nullptr, w.data(), x.data(), wt.data(), s);
    EXPECT_EQ(dw2, dw) << name;
  }
}

// The image-parallel path (several threads) gives the single-thread forward and dinp bit for bit
// and dweight to float rounding (partial sums per thread, see cnn.hpp).
TEST(Conv2d, ThreadCountIndependent) {
  const k::Conv2dShape s = conv(5, 8, 9, 9, 6, 3, 3, 1, 1);
  const auto x = random_vec(std::size_t(s.N) * s.C * s.H * s.W, 1), wt = random_vec(std::size_t(s.OC) * s.C * 9, 2);
  const auto dy = random_vec(std::size_t(s.N) * s.OC * s.out_h() * s.out_w(), 3);
  auto run = [&](int threads, std::vector<float>& y, std::vector<float>& dx, std::vector<float>& dw) {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(threads);
    y.assign(dy.size(), 0.0f);
    dx.assign(x.size(), 0.0f);
    dw.assign(wt.size(), 0.0f);
    k::conv2d_forward(y.data(), x.data(), wt.data(), nullptr, s);
    k::conv2d_backward(dx.data(), dw.data(), nullptr, dy.data(), x.data(), wt.data(), s);
    omp_set_num_threads(saved);
  };
  std::vector<float> y1, dx1, dw1, y3, dx3, dw3;
  run(1, y1, dx1, dw1);
  run(3, y3, dx3, dw3);
  EXPECT_EQ(y1, y3);
  EXPECT_EQ(dx1, dx3);
  for (std::size_t i = 0; i < dw1.size(); i++) EXPECT_NEAR(dw1[i], dw3[i], 1e-4f * (1 + std::fabs(dw1[i])));
}

namespace {

// Backward of conv_direct in double: dinp and dweight of L = sum dout * y, with the sum of the
// absolute values of each entry's terms (for a rounding tolerance that scales with them).
struct ConvGrads {
  std::vector<double> dx, dx_abs, dw, dw_abs;
};
ConvGrads conv_backward_direct(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& dy,
                               const k::Conv2dShape& s) {
  ConvGrads g;
  g.dx.assign(x.size(), 0.0);
  g.dx_abs = g.dx;
  g.dw.assign(w.size(), 0.0);
  g.dw_abs = g.dw;
  const int OH = s.out_h(), OW = s.out_w();
  for (int n = 0; n < s.N; n++)
    for (int o = 0; o < s.OC; o++)
      for (int oy = 0; oy < OH; oy++)
        for (int ox = 0; ox < OW; ox++) {
          const double d = dy[((std::size_t(n) * s.OC + o) * OH + oy) * OW + ox];
          for (int c = 0; c < s.C; c++)
            for (int i = 0; i < s.KH; i++)
              for (int j = 0; j < s.KW; j++) {
                const int iy = oy * s.stride - s.pad + i, ix = ox * s.stride - s.pad + j;
                if (iy < 0 || iy >= s.H || ix < 0 || ix >= s.W) continue;
                const std::size_t xi = ((std::size_t(n) * s.C + c) * s.H + iy) * s.W + ix;
                const std::size_t wi = ((std::size_t(o) * s.C + c) * s.KH + i) * s.KW + j;
                g.dx[xi] += d * w[wi];
                g.dx_abs[xi] += std::fabs(d * w[wi]);
                g.dw[wi] += d * x[xi];
                g.dw_abs[wi] += std::fabs(d * x[xi]);
              }
        }
  return g;
}

// Largest |got - (base + want)| / (1 + abs_terms): float rounding of sums of many terms stays
// below ~1e-6 of the terms' absolute sum; one term missing or doubled is ~1/count of it.
double worst_error(const std::vector<float>& got, const std::vector<float>& base, const std::vector<double>& want,
                   const std::vector<double>& abs_terms) {
  double worst = 0.0;
  for (std::size_t i = 0; i < got.size(); i++)
    worst = std::max(worst, std::fabs(got[i] - (double(base[i]) + want[i])) / (1.0 + abs_terms[i]));
  return worst;
}

}  // namespace

// The direct 3x3 path (conv_direct.cpp), stride 1 and 2, on the ResNet-20 stage shapes and on odd
// sizes (channel counts that are not whole register tiles, 1-pixel and narrow images), against
// the double references: forward, dinp written and accumulated, dweight accumulated, at 1 and 2
// threads (bitwise equal: every result has a fixed summation order).
TEST(Conv2d, DirectPathMatchesReferenceOnResNetShapes) {
  const std::vector<k::Conv2dShape> shapes = {
      conv(2, 3, 32, 32, 16, 3, 3, 1, 1), conv(3, 16, 32, 32, 16, 3, 3, 1, 1), conv(2, 32, 16, 16, 32, 3, 3, 1, 1),
      conv(3, 64, 8, 8, 64, 3, 3, 1, 1), conv(2, 5, 13, 11, 7, 3, 3, 1, 1), conv(3, 17, 1, 1, 9, 3, 3, 1, 1),
      conv(1, 4, 2, 3, 6, 3, 3, 1, 1), conv(2, 6, 5, 40, 5, 3, 3, 1, 1),
      // stride 2: the ResNet stage entries, odd and tiny images
      conv(2, 16, 32, 32, 32, 3, 3, 2, 1), conv(3, 32, 16, 16, 64, 3, 3, 2, 1), conv(2, 5, 13, 11, 7, 3, 3, 2, 1),
      conv(3, 3, 1, 1, 4, 3, 3, 2, 1), conv(1, 4, 2, 3, 6, 3, 3, 2, 1), conv(2, 6, 5, 40, 5, 3, 3, 2, 1)};
  unsigned seed = 300;
  for (const k::Conv2dShape& s : shapes) {
    const auto x = random_vec(std::size_t(s.N) * s.C * s.H * s.W, seed++);
    const auto wt = random_vec(std::size_t(s.OC) * s.C * 9, seed++);
    const auto dy = random_vec(std::size_t(s.N) * s.OC * s.out_h() * s.out_w(), seed++);
    const auto dx0 = random_vec(x.size(), seed++), dw0 = random_vec(wt.size(), seed++);
    const auto y_ref = conv_direct(x, wt, nullptr, s);
    const ConvGrads ref = conv_backward_direct(x, wt, dy, s);
    std::vector<double> y_abs(y_ref.size(), 0.0);  // forward terms' absolute sums, from the same loops
    {
      std::vector<float> ax(x.size()), aw(wt.size());
      for (std::size_t i = 0; i < x.size(); i++) ax[i] = std::fabs(x[i]);
      for (std::size_t i = 0; i < wt.size(); i++) aw[i] = std::fabs(wt[i]);
      y_abs = conv_direct(ax, aw, nullptr, s);
    }
    std::vector<float> y1, dx1, dw1;
    for (int threads : {1, 2}) {
      const int saved = omp_get_max_threads();
      omp_set_num_threads(threads);
      std::vector<float> y(y_ref.size(), 7.0f), dx = dx0, dx_written(x.size(), 9.0f), dw = dw0;
      k::conv2d_forward(y.data(), x.data(), wt.data(), nullptr, s);
      k::conv2d_backward(dx.data(), dw.data(), nullptr, dy.data(), x.data(), wt.data(), s);
      std::vector<float> dw_unused = dw0;
      k::conv2d_backward(dx_written.data(), dw_unused.data(), nullptr, dy.data(), x.data(), wt.data(), s, nullptr,
                         false);
      omp_set_num_threads(saved);
      const std::string name = conv_name(s) + " C" + std::to_string(s.C) + " OC" + std::to_string(s.OC) + " threads " +
                               std::to_string(threads);
      const std::vector<float> zeros_x(x.size(), 0.0f), zeros_y(y.size(), 0.0f);
      EXPECT_LT(worst_error(y, zeros_y, y_ref, y_abs), 1e-6) << name << " forward";
      EXPECT_LT(worst_error(dx, dx0, ref.dx, ref.dx_abs), 1e-6) << name << " dinp accumulated";
      EXPECT_LT(worst_error(dx_written, zeros_x, ref.dx, ref.dx_abs), 1e-6) << name << " dinp written";
      EXPECT_LT(worst_error(dw, dw0, ref.dw, ref.dw_abs), 1e-6) << name << " dweight";
      if (threads == 1) {
        y1 = y, dx1 = dx, dw1 = dw;
      } else {
        EXPECT_EQ(y, y1) << name;
        EXPECT_EQ(dx, dx1) << name;
        EXPECT_EQ(dw, dw1) << name;
      }
    }
  }
}

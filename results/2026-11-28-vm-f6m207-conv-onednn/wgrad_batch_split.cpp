// The weight gradient of one 3x3 convolution over 24 images in one call against the sum of three
// calls of 8 (what 3 data-parallel ranks add up), on the direct kernel and through oneDNN
// (SCALEPROBE_CONV), at ResNet-like shapes, normal random data, one thread. Built against the
// release kernels library:
//   g++ -O1 -std=c++20 -I../.. wgrad_batch_split.cpp ../../build/release/kernels/libscaleprobe_kernels.a -fopenmp
//   -ldnnl \
//     -L/usr/lib/x86_64-linux-gnu/openblas-openmp -lopenblas -o /tmp/wgrad_batch_split
//   for c in direct auto; do echo "-- $c"; SCALEPROBE_CONV=$c OMP_NUM_THREADS=1 /tmp/wgrad_batch_split; done
#include <cmath>
#include <cstdio>
#include <vector>
#include <random>
#include <tuple>
#include "kernels/cnn.hpp"
namespace k = sp::kernels;
int main() {
  for (auto [C, H, OC, st] : std::vector<std::tuple<int, int, int, int>>{
           std::tuple{8, 32, 8, 1}, std::tuple{8, 32, 16, 2}, std::tuple{16, 16, 16, 1}, std::tuple{16, 16, 32, 2},
           std::tuple{32, 8, 32, 1}}) {
    k::Conv2dShape s;
    s.N = 24;
    s.C = C;
    s.H = s.W = H;
    s.OC = OC;
    s.KH = s.KW = 3;
    s.stride = st;
    s.pad = 1;
    std::mt19937 g(1);
    std::normal_distribution<float> d;
    const int OH = s.out_h();
    std::vector<float> x(24 * C * H * H), w(OC * C * 9), dy(24 * OC * OH * OH);
    for (auto& v : x) v = d(g);
    for (auto& v : w) v = d(g);
    for (auto& v : dy) v = d(g);
    std::vector<float> dw1(w.size(), 0), dw3(w.size(), 0);
    k::conv2d_backward(nullptr, dw1.data(), nullptr, dy.data(), x.data(), w.data(), s, nullptr, false);
    k::Conv2dShape s8 = s;
    s8.N = 8;
    for (int r = 0; r < 3; ++r) {
      std::vector<float> part(w.size(), 0);
      k::conv2d_backward(nullptr, part.data(), nullptr, dy.data() + r * 8 * OC * OH * OH, x.data() + r * 8 * C * H * H,
                         w.data(), s8, nullptr, false);
      for (size_t i = 0; i < w.size(); ++i) dw3[i] += part[i];
    }
    double worst = 0, norm = 0;
    for (size_t i = 0; i < w.size(); ++i) {
      worst = std::max(worst, (double)std::fabs(dw1[i] - dw3[i]));
      norm = std::max(norm, (double)std::fabs(dw1[i]));
    }
    std::printf("C %d H %d OC %d s %d: max|dw(24) - sum dw(8)| = %.3g of max|dw| %.3g\n", C, H, OC, st, worst, norm);
  }
}

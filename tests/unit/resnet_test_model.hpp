// The tiny ResNet and random image batches the ResNet model tests share (test_resnet_model.cpp,
// test_resnet_gradcheck.cpp).
#pragma once
#include <cstddef>
#include <random>
#include <vector>

#include "trainers/resnet/model.hpp"

namespace sp::test::resnet {

using namespace sp::resnet;

inline ResNetConfig tiny() {
  ResNetConfig c;
  c.name = "tiny";
  c.depth = 8;
  c.width = 4;
  c.num_classes = 5;
  return c;
}

struct Batch {
  int N, H, W;
  std::vector<float> images;
  std::vector<int> labels;
};
inline Batch random_batch(int N, int H, int W, int classes, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd;
  Batch b{N, H, W, std::vector<float>(std::size_t(N) * 3 * H * W), std::vector<int>(N)};
  for (auto& x : b.images) x = nd(rng);
  for (auto& y : b.labels) y = int(rng() % classes);
  return b;
}

inline double forward(ResNet& m, const Batch& b, bool train = true) {
  return resnet_forward(m, b.images.data(), b.labels.data(), b.N, b.H, b.W, train);
}

}  // namespace sp::test::resnet

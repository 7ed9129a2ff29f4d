// Seeded uniform random vectors for kernel tests and benchmarks (deterministic per seed).
#pragma once
#include <cstddef>
#include <random>
#include <vector>

namespace sp::kernels {

inline std::vector<float> random_vec(std::size_t n, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

}  // namespace sp::kernels

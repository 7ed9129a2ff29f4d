// What the one-thread GEMM probes of ../2026-11-28-vm-f6m207-gemm-shapes and
// ../2026-11-28-vm-f6m207-matmul-primitive share: gpt-tiny's GEMM shapes, a pass over memory that
// leaves the next call's operands out of the caches ("cold"), and the median time of a call.
// Header only: each probe's g++ line in its measure.sh builds it as it is.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

namespace probe {

using clk = std::chrono::steady_clock;

// One GEMM as the trainers call it, row-major: C[M,N] = op(A) . op(B) + beta C; ta: A is stored
// [K,M], tb: B is stored [N,K].
struct GemmShape {
  bool ta, tb;
  int M, N, K;
  float beta;
};

// gpt-tiny's GEMMs at batch 8 (1024 rows, 256 channels): forward, input gradients and weight
// gradients (the last two accumulate: beta = 1).
inline std::vector<GemmShape> gpt_tiny_gemm_shapes() {
  return {{0, 0, 1024, 256, 256, 0},  {0, 0, 1024, 256, 768, 0},  {0, 0, 1024, 256, 1024, 0},
          {0, 0, 1024, 1024, 256, 0}, {0, 1, 1024, 256, 256, 1},  {0, 1, 1024, 256, 1024, 1},
          {0, 1, 1024, 768, 256, 1},  {0, 1, 1024, 1024, 256, 1}, {1, 0, 256, 256, 1024, 1},
          {1, 0, 256, 1024, 1024, 1}, {1, 0, 768, 256, 1024, 1},  {1, 0, 1024, 256, 1024, 1}};
}

// A 256 MiB buffer; each call adds 1 to one float in every 64 bytes of it.
class CacheFlush {
 public:
  void operator()() {
    for (std::size_t i = 0; i < big_.size(); i += 16) big_[i] += 1;
  }

 private:
  std::vector<float> big_ = std::vector<float>(64 << 20);
};

// The median seconds of `calls` calls of f() (an odd count), flush() before each one when cold.
template <class F>
double median_seconds(int calls, bool cold, CacheFlush& flush, F&& f) {
  std::vector<double> ts;
  for (int r = 0; r < calls; r++) {
    if (cold) flush();
    auto a = clk::now();
    f();
    ts.push_back(std::chrono::duration<double>(clk::now() - a).count());
  }
  std::sort(ts.begin(), ts.end());
  return ts[calls / 2];
}

}  // namespace probe

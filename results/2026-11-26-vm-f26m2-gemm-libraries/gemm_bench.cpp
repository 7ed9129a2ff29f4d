// SGEMM at the shapes of gpt-tiny's linear layers (B*T = 1024 rows; matmul.cpp's three calls per
// layer: forward out = inp . W^T, backward dinp = dout . W, dweight = dout^T . inp), row-major,
// through one library chosen at compile time: OpenBLAS (cblas), BLIS (bli_sgemm, strides) or
// oneDNN (dnnl_sgemm). Prints GFLOP/s per shape, the best of `reps` timed calls after a warm-up,
// for `passes` passes.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include "../lib/sgemm_library.hpp"

int main(int argc, char** argv) {
  const int passes = argc > 1 ? std::atoi(argv[1]) : 3, reps = 20;
  struct Shape {
    const char* name;
    bool ta, tb;
    int M, N, K;
  };
  const int R = 1024, C = 256;
  const std::vector<Shape> shapes = {
      {"fwd qkv", false, true, R, 3 * C, C},      {"fwd proj", false, true, R, C, C},
      {"fwd fc", false, true, R, 4 * C, C},       {"fwd fcproj", false, true, R, C, 4 * C},
      {"dinp qkv", false, false, R, C, 3 * C},    {"dinp fc", false, false, R, C, 4 * C},
      {"dinp fcproj", false, false, R, 4 * C, C}, {"dw qkv", true, false, 3 * C, C, R},
      {"dw fc", true, false, 4 * C, C, R},        {"dw fcproj", true, false, C, 4 * C, R},
  };
  std::vector<float> a(4096 * 1024, 0.5f), b(4096 * 1024, 0.25f), c(4096 * 1024);
  for (int p = 1; p <= passes; ++p)
    for (const Shape& s : shapes) {
      sgemm(s.ta, s.tb, s.M, s.N, s.K, a.data(), b.data(), c.data());
      double best = 1e9;
      for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        sgemm(s.ta, s.tb, s.M, s.N, s.K, a.data(), b.data(), c.data());
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      std::printf("%s\t%d\t%s\t%d\t%d\t%d\t%.1f\n", kLib, p, s.name, s.M, s.N, s.K,
                  2.0 * s.M * s.N * s.K / best * 1e-9);
    }
}

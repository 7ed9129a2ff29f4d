// The helpers every kernel benchmark shares (bench_kernels.cpp, bench_cnn_kernels.cpp): rate
// counters, the timed loop, and activation benchmarks over n floats.
#pragma once
#include <benchmark/benchmark.h>

#include <cstddef>
#include <vector>

#include "kernels/random_fill.hpp"

namespace sp::bench {
using sp::kernels::random_vec;
using std::size_t;

inline std::vector<int> random_tokens(size_t n, int vocab, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(0, vocab - 1);
  std::vector<int> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

inline void set_flops(benchmark::State& state, double flop_per_iter) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(flop_per_iter * 1e-9 * (double)state.iterations(), benchmark::Counter::kIsRate);
}
inline void set_bytes(benchmark::State& state, double bytes_per_iter) {
  state.counters["GB/s"] =
      benchmark::Counter(bytes_per_iter * 1e-9 * (double)state.iterations(), benchmark::Counter::kIsRate);
}

// The timed loop of every benchmark: kernel() once per iteration, its output passed to
// DoNotOptimize so that the compiler cannot drop a call whose result nothing reads.
template <typename Kernel>
inline void time_loop(benchmark::State& state, const float* output, const Kernel& kernel) {
  for (auto _ : state) {
    kernel();
    benchmark::DoNotOptimize(output);
  }
}

// Activation functions (GELU, ReLU), elementwise over n floats x drawn from [lo, hi]: forward
// reads x and writes out; backward reads x (ReLU: its output, the same mask) and dout and adds
// into dinp.
using ActivationForward = void (*)(float* out, const float* x, size_t n);
using ActivationBackward = void (*)(float* dinp, const float* x, const float* dout, size_t n);
inline void bench_activation_forward(benchmark::State& state, ActivationForward forward, size_t n, float lo = -1.0f,
                                     float hi = 1.0f) {
  const auto x = random_vec(n, 1, lo, hi);
  std::vector<float> out(n);
  time_loop(state, out.data(), [&] { forward(out.data(), x.data(), n); });
  set_bytes(state, 4.0 * 2 * n);  // x read, out written
}
inline void bench_activation_backward(benchmark::State& state, ActivationBackward backward, size_t n, float lo = -1.0f,
                                      float hi = 1.0f) {
  const auto x = random_vec(n, 1, lo, hi), dout = random_vec(n, 2);
  std::vector<float> dinp(n, 0.0f);
  time_loop(state, dinp.data(), [&] { backward(dinp.data(), x.data(), dout.data(), n); });
  set_bytes(state, 4.0 * 4 * n);  // x, dout read; dinp read + written
}

}  // namespace sp::bench

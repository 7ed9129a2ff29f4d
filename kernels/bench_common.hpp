// What every bench_kernels source shares: the gpt-tiny-like shapes and the GFLOP/s and GB/s
// counters (logical bytes: each tensor read or written once).
#pragma once
#include <benchmark/benchmark.h>

#include <cstddef>

#include "kernels/random_fill.hpp"

namespace sp::kernels::bench {

inline void set_flops(benchmark::State& state, double flop_per_iter) {
  state.counters["GFLOP/s"] = benchmark::Counter(flop_per_iter * 1e-9 * (double)state.iterations(),
                                                 benchmark::Counter::kIsRate);
}
inline void set_bytes(benchmark::State& state, double bytes_per_iter) {
  state.counters["GB/s"] = benchmark::Counter(bytes_per_iter * 1e-9 * (double)state.iterations(),
                                              benchmark::Counter::kIsRate);
}

}  // namespace sp::kernels::bench

// Google Benchmark of every kernel, forward and backward, at gpt-tiny-like shapes
// (B=8, T=128, C=256, NH=4, V=256), the CNN kernels at ResNet-20 CIFAR shapes (batch 32,
// 16x32x32, 32x16x16, 64x8x8), plus an SGEMM probe of the machine's attainable GFLOP/s.
// Counters: GFLOP/s for the compute-bound kernels (matmul, attention, conv, SGEMM), GB/s for the
// memory-bound ones, counting the logical bytes each tensor is read or written once (a lower
// bound on the real traffic). Wall-clock time (UseRealTime): the kernels are multithreaded.
// Threads: set OMP_NUM_THREADS (governs both our OpenMP loops and OpenBLAS, see kernels/blas.hpp).
#include <benchmark/benchmark.h>
#include <omp.h>

#include <random>
#include <string>
#include <vector>

#include "kernels/kernels.hpp"
#include "kernels/random_fill.hpp"

namespace k = sp::kernels;

namespace {

constexpr int B = 8, T = 128, C = 256, NH = 4, V = 256;
constexpr size_t N = (size_t)B * T;

using sp::kernels::random_vec;

std::vector<int> random_tokens(size_t n, int vocab, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(0, vocab - 1);
  std::vector<int> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

void set_flops(benchmark::State& state, double flop_per_iter) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(flop_per_iter * 1e-9 * (double)state.iterations(), benchmark::Counter::kIsRate);
}
void set_bytes(benchmark::State& state, double bytes_per_iter) {
  state.counters["GB/s"] =
      benchmark::Counter(bytes_per_iter * 1e-9 * (double)state.iterations(), benchmark::Counter::kIsRate);
}

// The timed loop of every benchmark: kernel() once per iteration, its output passed to
// DoNotOptimize so that the compiler cannot drop a call whose result nothing reads.
template <typename Kernel>
void time_loop(benchmark::State& state, const float* output, const Kernel& kernel) {
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
void bench_activation_forward(benchmark::State& state, ActivationForward forward, size_t n, float lo = -1.0f,
                              float hi = 1.0f) {
  const auto x = random_vec(n, 1, lo, hi);
  std::vector<float> out(n);
  time_loop(state, out.data(), [&] { forward(out.data(), x.data(), n); });
  set_bytes(state, 4.0 * 2 * n);  // x read, out written
}
void bench_activation_backward(benchmark::State& state, ActivationBackward backward, size_t n, float lo = -1.0f,
                               float hi = 1.0f) {
  const auto x = random_vec(n, 1, lo, hi), dout = random_vec(n, 2);
  std::vector<float> dinp(n, 0.0f);
  time_loop(state, dinp.data(), [&] { backward(dinp.data(), x.data(), dout.data(), n); });
  set_bytes(state, 4.0 * 4 * n);  // x, dout read; dinp read + written
}

// ---- SGEMM probe: square n x n x n through matmul_forward without bias (one sgemm) ----
void BM_sgemm(benchmark::State& state) {
  const int n = (int)state.range(0);
  const auto a = random_vec((size_t)n * n, 1), b = random_vec((size_t)n * n, 2);
  std::vector<float> c((size_t)n * n);
  for (auto _ : state) {
    k::matmul_forward(c.data(), a.data(), b.data(), nullptr, 1, n, n, n);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, 2.0 * n * n * (double)n);
}
BENCHMARK(BM_sgemm)->RangeMultiplier(2)->Range(256, 2048)->UseRealTime()->Unit(benchmark::kMillisecond);

// ---- matmul: args (C_in, OC); the GPT block's qkv (C->3C), fc (C->4C), proj (4C->C), lm head ----
void BM_matmul_forward(benchmark::State& state) {
  const int cin = (int)state.range(0), oc = (int)state.range(1);
  const auto inp = random_vec(N * cin, 1), w = random_vec((size_t)oc * cin, 2), bias = random_vec(oc, 3);
  std::vector<float> out(N * oc);
  time_loop(state, out.data(),
            [&] { k::matmul_forward(out.data(), inp.data(), w.data(), bias.data(), B, T, cin, oc); });
  set_flops(state, 2.0 * N * cin * oc);
}
void BM_matmul_backward(benchmark::State& state) {
  const int cin = (int)state.range(0), oc = (int)state.range(1);
  const auto inp = random_vec(N * cin, 1), w = random_vec((size_t)oc * cin, 2), dout = random_vec(N * oc, 3);
  std::vector<float> dinp(N * cin, 0.0f), dw((size_t)oc * cin, 0.0f), db(oc, 0.0f);
  time_loop(state, dinp.data(), [&] {
    k::matmul_backward(dinp.data(), dw.data(), db.data(), dout.data(), inp.data(), w.data(), B, T, cin, oc);
  });
  set_flops(state, 4.0 * N * cin * oc);  // two GEMMs; the bias column sum is negligible
}
#define MATMUL_ARGS ->Args({C, 3 * C})->Args({C, 4 * C})->Args({4 * C, C})->Args({C, V})->UseRealTime()
BENCHMARK(BM_matmul_forward) MATMUL_ARGS;
BENCHMARK(BM_matmul_backward) MATMUL_ARGS;

// ---- attention: flop on the causal triangle, see kernels/attention.hpp ----
constexpr double kCausalPairs = (double)T * (T + 1) / 2.0;
void BM_attention_forward(benchmark::State& state) {
  const auto qkv = random_vec(N * 3 * C, 1);
  std::vector<float> out(N * C), att((size_t)B * NH * T * T);
  time_loop(state, out.data(), [&] { k::attention_forward(out.data(), att.data(), qkv.data(), B, T, C, NH); });
  set_flops(state, 4.0 * B * C * kCausalPairs);
}
void BM_attention_backward(benchmark::State& state) {
  const auto qkv = random_vec(N * 3 * C, 1), dout = random_vec(N * C, 2);
  std::vector<float> out(N * C), att((size_t)B * NH * T * T), dqkv(N * 3 * C, 0.0f);
  k::attention_forward(out.data(), att.data(), qkv.data(), B, T, C, NH);
  time_loop(state, dqkv.data(),
            [&] { k::attention_backward(dqkv.data(), dout.data(), qkv.data(), att.data(), B, T, C, NH); });
  set_flops(state, 8.0 * B * C * kCausalPairs);
}
BENCHMARK(BM_attention_forward)->UseRealTime();
BENCHMARK(BM_attention_backward)->UseRealTime();

// ---- memory-bound kernels: GB/s of logical traffic (4 bytes per float touched) ----
void BM_encoder_forward(benchmark::State& state) {
  const auto wte = random_vec((size_t)V * C, 1), wpe = random_vec((size_t)T * C, 2);
  const auto tokens = random_tokens(N, V, 3);
  std::vector<float> out(N * C);
  time_loop(state, out.data(), [&] { k::encoder_forward(out.data(), tokens.data(), wte.data(), wpe.data(), B, T, C); });
  set_bytes(state, 4.0 * 3 * N * C);  // wte row + wpe row read, out written, per position
}
void BM_encoder_backward(benchmark::State& state) {
  const auto dout = random_vec(N * C, 1);
  const auto tokens = random_tokens(N, V, 3);
  std::vector<float> dwte((size_t)V * C, 0.0f), dwpe((size_t)T * C, 0.0f);
  time_loop(state, dwte.data(),
            [&] { k::encoder_backward(dwte.data(), dwpe.data(), dout.data(), tokens.data(), B, T, C); });
  set_bytes(state, 4.0 * 5 * N * C);  // dout read, dwte and dwpe rows read + written
}
void BM_layernorm_forward(benchmark::State& state) {
  const auto inp = random_vec(N * C, 1), w = random_vec(C, 2), b = random_vec(C, 3);
  std::vector<float> out(N * C), mean(N), rstd(N);
  time_loop(state, out.data(), [&] {
    k::layernorm_forward(out.data(), mean.data(), rstd.data(), inp.data(), w.data(), b.data(), B, T, C);
  });
  set_bytes(state, 4.0 * 2 * N * C);  // inp read, out written
}
void BM_layernorm_backward(benchmark::State& state) {
  const auto inp = random_vec(N * C, 1), w = random_vec(C, 2), b = random_vec(C, 3), dout = random_vec(N * C, 4);
  std::vector<float> out(N * C), mean(N), rstd(N), dinp(N * C, 0.0f), dw(C, 0.0f), db(C, 0.0f);
  k::layernorm_forward(out.data(), mean.data(), rstd.data(), inp.data(), w.data(), b.data(), B, T, C);
  time_loop(state, dinp.data(), [&] {
    k::layernorm_backward(dinp.data(), dw.data(), db.data(), dout.data(), inp.data(), w.data(), mean.data(),
                          rstd.data(), B, T, C);
  });
  set_bytes(state, 4.0 * 4 * N * C);  // dout, inp read; dinp read + written
}
// GELU over the MLP hidden activation [B, T, 4C], inputs in [-3, 3] (both tails).
void BM_gelu_forward(benchmark::State& state) {
  bench_activation_forward(state, k::gelu_forward, N * 4 * C, -3.0f, 3.0f);
}
void BM_gelu_backward(benchmark::State& state) {
  bench_activation_backward(
      state, [](float* d, const float* x, const float* dy, size_t n) { k::gelu_backward(d, x, dy, n); }, N * 4 * C,
      -3.0f, 3.0f);
}
void BM_residual_forward(benchmark::State& state) {
  const auto a = random_vec(N * C, 1), b = random_vec(N * C, 2);
  std::vector<float> out(N * C);
  time_loop(state, out.data(), [&] { k::residual_forward(out.data(), a.data(), b.data(), N * C); });
  set_bytes(state, 4.0 * 3 * N * C);
}
void BM_residual_backward(benchmark::State& state) {
  const auto dout = random_vec(N * C, 1);
  std::vector<float> da(N * C, 0.0f), db(N * C, 0.0f);
  time_loop(state, da.data(), [&] { k::residual_backward(da.data(), db.data(), dout.data(), N * C); });
  set_bytes(state, 4.0 * 5 * N * C);
}
void BM_crossentropy_forward(benchmark::State& state) {
  const auto logits = random_vec(N * V, 1, -3.0f, 3.0f);
  const auto targets = random_tokens(N, V, 2);
  std::vector<float> losses(N), probs(N * V);
  time_loop(state, probs.data(), [&] {
    k::softmax_crossentropy_forward(losses.data(), probs.data(), logits.data(), targets.data(), B, T, V);
  });
  set_bytes(state, 4.0 * 2 * N * V);  // logits read, probs written
}
void BM_crossentropy_backward(benchmark::State& state) {
  const auto probs = random_vec(N * V, 1, 0.0f, 1.0f);
  const auto targets = random_tokens(N, V, 2);
  std::vector<float> dlogits(N * V, 0.0f);
  time_loop(state, dlogits.data(),
            [&] { k::softmax_crossentropy_backward(dlogits.data(), probs.data(), targets.data(), 1.0f / N, B, T, V); });
  set_bytes(state, 4.0 * 3 * N * V);  // probs read; dlogits read + written
}
BENCHMARK(BM_encoder_forward)->UseRealTime();
BENCHMARK(BM_encoder_backward)->UseRealTime();
BENCHMARK(BM_layernorm_forward)->UseRealTime();
BENCHMARK(BM_layernorm_backward)->UseRealTime();
BENCHMARK(BM_gelu_forward)->UseRealTime();
BENCHMARK(BM_gelu_backward)->UseRealTime();
BENCHMARK(BM_residual_forward)->UseRealTime();
BENCHMARK(BM_residual_backward)->UseRealTime();
BENCHMARK(BM_crossentropy_forward)->UseRealTime();
BENCHMARK(BM_crossentropy_backward)->UseRealTime();

// ---- CNN kernels at ResNet-20 CIFAR shapes, batch 32 ----
constexpr int kImgN = 32;
// Args: (C, H = W, OC, K, stride); pad = K / 2. The 3x3 convolutions of the three stages, the
// two stride-2 stage entries and the 1x1 stride-2 projection shortcut.
k::Conv2dShape conv_shape(const benchmark::State& state) {
  k::Conv2dShape s;
  s.N = kImgN;
  s.C = (int)state.range(0);
  s.H = s.W = (int)state.range(1);
  s.OC = (int)state.range(2);
  s.KH = s.KW = (int)state.range(3);
  s.stride = (int)state.range(4);
  s.pad = s.KH / 2;
  return s;
}
void BM_conv2d_forward(benchmark::State& state) {
  const k::Conv2dShape s = conv_shape(state);
  const auto inp = random_vec((size_t)s.N * s.C * s.H * s.W, 1);
  const auto w = random_vec((size_t)s.OC * s.C * s.KH * s.KW, 2);
  std::vector<float> out((size_t)s.N * s.OC * s.out_h() * s.out_w());
  time_loop(state, out.data(), [&] { k::conv2d_forward(out.data(), inp.data(), w.data(), nullptr, s); });
  set_flops(state, 2.0 * s.macs());
}
void BM_conv2d_backward(benchmark::State& state) {
  const k::Conv2dShape s = conv_shape(state);
  const size_t nin = (size_t)s.N * s.C * s.H * s.W, nout = (size_t)s.N * s.OC * s.out_h() * s.out_w();
  const auto inp = random_vec(nin, 1), w = random_vec((size_t)s.OC * s.C * s.KH * s.KW, 2), dout = random_vec(nout, 3);
  std::vector<float> dinp(nin, 0.0f), dw(w.size(), 0.0f);
  time_loop(state, dinp.data(),
            [&] { k::conv2d_backward(dinp.data(), dw.data(), nullptr, dout.data(), inp.data(), w.data(), s); });
  set_flops(state, 4.0 * s.macs());  // dinput and dweight GEMMs
}
// The weight gradient alone (dinp nullptr), to tell its speed from the input gradient's.
void BM_conv2d_weight_grad(benchmark::State& state) {
  const k::Conv2dShape s = conv_shape(state);
  const size_t nin = (size_t)s.N * s.C * s.H * s.W, nout = (size_t)s.N * s.OC * s.out_h() * s.out_w();
  const auto inp = random_vec(nin, 1), w = random_vec((size_t)s.OC * s.C * s.KH * s.KW, 2), dout = random_vec(nout, 3);
  std::vector<float> dw(w.size(), 0.0f);
  time_loop(state, dw.data(),
            [&] { k::conv2d_backward(nullptr, dw.data(), nullptr, dout.data(), inp.data(), w.data(), s); });
  set_flops(state, 2.0 * s.macs());
}
#define CONV_ARGS                             \
  ->Args({16, 32, 16, 3, 1})                  \
      ->Args({16, 32, 32, 3, 2})              \
      ->Args({32, 16, 32, 3, 1})              \
      ->Args({32, 16, 64, 3, 2})              \
      ->Args({64, 8, 64, 3, 1})               \
      ->Args({16, 32, 32, 1, 2})              \
      ->ArgNames({"C", "HW", "OC", "K", "s"}) \
      ->UseRealTime()
BENCHMARK(BM_conv2d_forward) CONV_ARGS;
BENCHMARK(BM_conv2d_backward) CONV_ARGS;
BENCHMARK(BM_conv2d_weight_grad) CONV_ARGS;

// Memory-bound CNN kernels. Args: (C, H = W) of a [32, C, H, W] activation.
size_t act_numel(const benchmark::State& state) {
  return (size_t)kImgN * state.range(0) * state.range(1) * state.range(1);
}
void BM_batchnorm_forward(benchmark::State& state) {
  const int C = (int)state.range(0), HW = (int)(state.range(1) * state.range(1));
  const size_t n = act_numel(state);
  const auto inp = random_vec(n, 1), g = random_vec(C, 2), b = random_vec(C, 3);
  std::vector<float> out(n), mean(C), rstd(C), rm(C, 0.0f), rv(C, 1.0f);
  time_loop(state, out.data(), [&] {
    k::batchnorm_forward_train(out.data(), mean.data(), rstd.data(), rm.data(), rv.data(), inp.data(), g.data(),
                               b.data(), kImgN, C, HW);
  });
  set_bytes(state, 4.0 * 3 * n);  // inp read twice (statistics, normalise), out written
}
void BM_batchnorm_backward(benchmark::State& state) {
  const int C = (int)state.range(0), HW = (int)(state.range(1) * state.range(1));
  const size_t n = act_numel(state);
  const auto inp = random_vec(n, 1), g = random_vec(C, 2), b = random_vec(C, 3), dout = random_vec(n, 4);
  std::vector<float> out(n), mean(C), rstd(C), dinp(n, 0.0f), dg(C, 0.0f), db(C, 0.0f);
  k::batchnorm_forward_train(out.data(), mean.data(), rstd.data(), nullptr, nullptr, inp.data(), g.data(), b.data(),
                             kImgN, C, HW);
  time_loop(state, dinp.data(), [&] {
    k::batchnorm_backward(dinp.data(), dg.data(), db.data(), dout.data(), inp.data(), g.data(), mean.data(),
                          rstd.data(), kImgN, C, HW);
  });
  set_bytes(state, 4.0 * 6 * n);  // dout, inp read twice; dinp read + written
}
// Batch norm + ReLU, training forward: batchnorm_forward_train then relu_forward in place
// (range 2 = 0), or batchnorm_relu_forward_train (range 2 = 1).
void BM_batchnorm_relu_forward(benchmark::State& state) {
  const int C = (int)state.range(0), HW = (int)(state.range(1) * state.range(1));
  const bool fused = state.range(2) != 0;
  const size_t n = act_numel(state);
  const auto inp = random_vec(n, 1), g = random_vec(C, 2), b = random_vec(C, 3);
  std::vector<float> out(n), mean(C), rstd(C), rm(C, 0.0f), rv(C, 1.0f);
  time_loop(state, out.data(), [&] {
    if (fused) {
      k::batchnorm_relu_forward_train(out.data(), mean.data(), rstd.data(), rm.data(), rv.data(), inp.data(), g.data(),
                                      b.data(), kImgN, C, HW);
    } else {
      k::batchnorm_forward_train(out.data(), mean.data(), rstd.data(), rm.data(), rv.data(), inp.data(), g.data(),
                                 b.data(), kImgN, C, HW);
      k::relu_forward(out.data(), out.data(), n);
    }
  });
  set_bytes(state, 4.0 * 3 * n);
}
#define BN_ARGS ->Args({16, 32})->Args({32, 16})->Args({64, 8})->ArgNames({"C", "HW"})->UseRealTime()
BENCHMARK(BM_batchnorm_relu_forward)
    ->ArgsProduct({{16, 32, 64}, {32, 16, 8}, {0, 1}})
    ->ArgNames({"C", "HW", "fused"})
    ->UseRealTime();
BENCHMARK(BM_batchnorm_forward) BN_ARGS;
BENCHMARK(BM_batchnorm_backward) BN_ARGS;

void BM_relu_forward(benchmark::State& state) { bench_activation_forward(state, k::relu_forward, act_numel(state)); }
void BM_relu_backward(benchmark::State& state) { bench_activation_backward(state, k::relu_backward, act_numel(state)); }
BENCHMARK(BM_relu_forward)->Args({16, 32})->ArgNames({"C", "HW"})->UseRealTime();
BENCHMARK(BM_relu_backward)->Args({16, 32})->ArgNames({"C", "HW"})->UseRealTime();

// Pooling: args (C, H = W, K, stride, pad).
k::Pool2dShape pool_shape(const benchmark::State& state) {
  return {kImgN,
          (int)state.range(0),
          (int)state.range(1),
          (int)state.range(1),
          (int)state.range(2),
          (int)state.range(3),
          (int)state.range(4)};
}
void BM_maxpool_forward(benchmark::State& state) {
  const k::Pool2dShape s = pool_shape(state);
  const size_t nin = (size_t)s.N * s.C * s.H * s.W, nout = (size_t)s.N * s.C * s.out_h() * s.out_w();
  const auto inp = random_vec(nin, 1);
  std::vector<float> out(nout);
  std::vector<int> am(nout);
  time_loop(state, out.data(), [&] { k::maxpool2d_forward(out.data(), am.data(), inp.data(), s); });
  set_bytes(state, 4.0 * (nin + 2 * nout));  // inp read; out and argmax written
}
void BM_maxpool_backward(benchmark::State& state) {
  const k::Pool2dShape s = pool_shape(state);
  const size_t nin = (size_t)s.N * s.C * s.H * s.W, nout = (size_t)s.N * s.C * s.out_h() * s.out_w();
  const auto inp = random_vec(nin, 1), dout = random_vec(nout, 2);
  std::vector<float> out(nout), dinp(nin, 0.0f);
  std::vector<int> am(nout);
  k::maxpool2d_forward(out.data(), am.data(), inp.data(), s);
  time_loop(state, dinp.data(), [&] { k::maxpool2d_backward(dinp.data(), dout.data(), am.data(), s); });
  set_bytes(state, 4.0 * (2 * nout + 2 * nin));  // dout, argmax read; dinp read + written
}
void BM_avgpool_forward(benchmark::State& state) {
  const k::Pool2dShape s = pool_shape(state);
  const size_t nin = (size_t)s.N * s.C * s.H * s.W, nout = (size_t)s.N * s.C * s.out_h() * s.out_w();
  const auto inp = random_vec(nin, 1);
  std::vector<float> out(nout);
  time_loop(state, out.data(), [&] { k::avgpool2d_forward(out.data(), inp.data(), s); });
  set_bytes(state, 4.0 * (nin + nout));
}
void BM_avgpool_backward(benchmark::State& state) {
  const k::Pool2dShape s = pool_shape(state);
  const size_t nin = (size_t)s.N * s.C * s.H * s.W, nout = (size_t)s.N * s.C * s.out_h() * s.out_w();
  const auto dout = random_vec(nout, 1);
  std::vector<float> dinp(nin, 0.0f);
  time_loop(state, dinp.data(), [&] { k::avgpool2d_backward(dinp.data(), dout.data(), s); });
  set_bytes(state, 4.0 * (nout + 2 * nin));
}
#define POOL_ARGS \
  ->Args({16, 32, 3, 2, 1})->Args({16, 32, 2, 2, 0})->ArgNames({"C", "HW", "K", "s", "p"})->UseRealTime()
BENCHMARK(BM_maxpool_forward) POOL_ARGS;
BENCHMARK(BM_maxpool_backward) POOL_ARGS;
BENCHMARK(BM_avgpool_forward) POOL_ARGS;
BENCHMARK(BM_avgpool_backward) POOL_ARGS;

// Global average pool: the ResNet-20 head, [32, 64, 8, 8] -> [32, 64].
void BM_global_avgpool_forward(benchmark::State& state) {
  const int C = 64, HW = 64;
  const auto inp = random_vec((size_t)kImgN * C * HW, 1);
  std::vector<float> out((size_t)kImgN * C);
  time_loop(state, out.data(), [&] { k::global_avgpool_forward(out.data(), inp.data(), kImgN, C, HW); });
  set_bytes(state, 4.0 * kImgN * C * (HW + 1));
}
void BM_global_avgpool_backward(benchmark::State& state) {
  const int C = 64, HW = 64;
  const auto dout = random_vec((size_t)kImgN * C, 1);
  std::vector<float> dinp((size_t)kImgN * C * HW, 0.0f);
  time_loop(state, dinp.data(), [&] { k::global_avgpool_backward(dinp.data(), dout.data(), kImgN, C, HW); });
  set_bytes(state, 4.0 * kImgN * C * (2 * HW + 1));
}
BENCHMARK(BM_global_avgpool_forward)->UseRealTime();
BENCHMARK(BM_global_avgpool_backward)->UseRealTime();

// ---- optimizers over 4 Mi parameters (about a gpt-tiny-sized model, out of cache) ----
constexpr size_t kParams = size_t{1} << 22;
void BM_adamw(benchmark::State& state) {
  auto p = random_vec(kParams, 1);
  const auto g = random_vec(kParams, 2, -1e-3f, 1e-3f);
  std::vector<float> m(kParams, 0.0f), v(kParams, 0.0f);
  k::AdamWConfig cfg;
  cfg.lr = 1e-4f;
  cfg.weight_decay = 0.1f;
  long step = 0;
  time_loop(state, p.data(), [&] { k::adamw_update(p.data(), g.data(), m.data(), v.data(), kParams, cfg, ++step); });
  set_bytes(state, 4.0 * 7 * kParams);  // p, g, m, v read; p, m, v written
}
void BM_sgd_nesterov(benchmark::State& state) {
  auto p = random_vec(kParams, 1);
  const auto g = random_vec(kParams, 2, -1e-3f, 1e-3f);
  std::vector<float> buf(kParams, 0.0f);
  k::SGDConfig cfg;
  cfg.lr = 1e-2f;
  cfg.momentum = 0.9f;
  cfg.weight_decay = 5e-4f;
  cfg.nesterov = true;
  long step = 0;
  time_loop(state, p.data(), [&] { k::sgd_update(p.data(), g.data(), buf.data(), kParams, cfg, ++step); });
  set_bytes(state, 4.0 * 5 * kParams);  // p, g, buf read; p, buf written
}
BENCHMARK(BM_adamw)->UseRealTime();
BENCHMARK(BM_sgd_nesterov)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  k::choose_blas_core(argv);  // may start the program again: before Initialize edits argv
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("omp_max_threads", std::to_string(omp_get_max_threads()));
  benchmark::AddCustomContext("blas", k::blas_description());
  benchmark::AddCustomContext("gemm", k::gemm_description());
  benchmark::AddCustomContext("shape", "B=8 T=128 C=256 NH=4 V=256; CNN batch 32");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

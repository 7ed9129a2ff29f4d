// The CNN kernels' benchmarks at ResNet-20 CIFAR shapes (batch 32: 16x32x32, 32x16x16, 64x8x8),
// part of bench_kernels (its main and counters: bench_kernels.cpp, bench_util.hpp).
#include <benchmark/benchmark.h>

#include <vector>

#include "kernels/bench_util.hpp"
#include "kernels/kernels.hpp"
#include "kernels/random_fill.hpp"

namespace k = sp::kernels;

namespace {

using namespace sp::bench;

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
// A residual block's end: bn + shortcut + ReLU as three kernels (fused 0) or one pass (fused 1).
void BM_batchnorm_add_relu_forward(benchmark::State& state) {
  const int C = (int)state.range(0), HW = (int)(state.range(1) * state.range(1));
  const bool fused = state.range(2) != 0;
  const size_t n = act_numel(state);
  const auto inp = random_vec(n, 1), shortcut = random_vec(n, 4), g = random_vec(C, 2), b = random_vec(C, 3);
  std::vector<float> bn(n), out(n), mean(C), rstd(C), rm(C, 0.0f), rv(C, 1.0f);
  time_loop(state, out.data(), [&] {
    if (fused) {
      k::batchnorm_add_relu_forward_train(out.data(), mean.data(), rstd.data(), rm.data(), rv.data(), inp.data(),
                                          shortcut.data(), g.data(), b.data(), kImgN, C, HW);
    } else {
      k::batchnorm_forward_train(bn.data(), mean.data(), rstd.data(), rm.data(), rv.data(), inp.data(), g.data(),
                                 b.data(), kImgN, C, HW);
      k::residual_forward(out.data(), bn.data(), shortcut.data(), n);
      k::relu_forward(out.data(), out.data(), n);
    }
  });
  set_bytes(state, 4.0 * 4 * n);  // inp twice, shortcut, out: the fused pass's traffic
}
BENCHMARK(BM_batchnorm_add_relu_forward)  // ResNet-20's three stages
    ->Args({16, 32, 0})
    ->Args({16, 32, 1})
    ->Args({32, 16, 0})
    ->Args({32, 16, 1})
    ->Args({64, 8, 0})
    ->Args({64, 8, 1})
    ->ArgNames({"C", "HW", "fused"})
    ->UseRealTime();
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

}  // namespace

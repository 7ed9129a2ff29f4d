// Google Benchmark of every kernel, forward and backward, at gpt-tiny-like shapes
// (B=8, T=128, C=256, NH=4, V=256), the CNN kernels at ResNet-20 CIFAR shapes (batch 32,
// 16x32x32, 32x16x16, 64x8x8; bench_cnn_kernels.cpp), plus an SGEMM probe of the machine's attainable GFLOP/s.
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
#include "kernels/bench_util.hpp"
#include "kernels/random_fill.hpp"

namespace k = sp::kernels;

namespace {

constexpr int B = 8, T = 128, C = 256, NH = 4, V = 256;
constexpr size_t N = (size_t)B * T;

using namespace sp::bench;

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
// arg: the query rows per block (kernels/attention.hpp's row_block)
void BM_attention_forward(benchmark::State& state) {
  const int row_block = (int)state.range(0);
  auto qkv = random_vec(N * 3 * C, 1);
  std::vector<float> out(N * C), att((size_t)B * NH * T * T);
  time_loop(state, out.data(),
            [&] { k::attention_forward(out.data(), att.data(), qkv.data(), nullptr, B, T, C, NH, row_block); });
  set_flops(state, 4.0 * B * C * kCausalPairs);
}
void BM_attention_backward(benchmark::State& state) {
  const int row_block = (int)state.range(0);
  auto qkv = random_vec(N * 3 * C, 1);
  const auto dout = random_vec(N * C, 2);
  std::vector<float> out(N * C), att((size_t)B * NH * T * T), dqkv(N * 3 * C, 0.0f);
  k::attention_forward(out.data(), att.data(), qkv.data(), nullptr, B, T, C, NH, row_block);
  time_loop(state, dqkv.data(), [&] {
    k::attention_backward(dqkv.data(), nullptr, dout.data(), qkv.data(), att.data(), B, T, C, NH, true, row_block);
  });
  set_flops(state, 8.0 * B * C * kCausalPairs);
}
#define ATTENTION_ARGS ->Arg(32)->Arg(k::kAttentionRowBlock)->Arg(T)->UseRealTime()
BENCHMARK(BM_attention_forward) ATTENTION_ARGS;
BENCHMARK(BM_attention_backward) ATTENTION_ARGS;

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
// The gradient norm's sum of squares (gradient clipping) over the same 4 Mi floats.
void BM_sum_of_squares(benchmark::State& state) {
  const auto g = random_vec(kParams, 2, -1e-3f, 1e-3f);
  double s = 0;
  for (auto _ : state) {
    s += k::sum_of_squares(g.data(), kParams);
    benchmark::DoNotOptimize(s);
  }
  set_bytes(state, 4.0 * kParams);
}
BENCHMARK(BM_adamw)->UseRealTime();
BENCHMARK(BM_sgd_nesterov)->UseRealTime();
BENCHMARK(BM_sum_of_squares)->UseRealTime();

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

#include "kernels/optim.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <vector>

#include "kernels/profile.hpp"

namespace sp::kernels {

void adamw_update(float* params, const float* grads, float* m, float* v, size_t n, const AdamWConfig& cfg, long step) {
  profile::Scope scope("adamw_update", 16.0 * double(n), 28.0 * double(n));
  assert(step >= 1);
  // Bias corrections in double: beta2^step is close to 1 for thousands of steps.
  const float bc1 = (float)(1.0 - std::pow((double)cfg.beta1, (double)step));
  const float bc2 = (float)(1.0 - std::pow((double)cfg.beta2, (double)step));
  // The settings as locals: read through cfg, every store to params/m/v might change them (the
  // compiler cannot tell), which kept the loop scalar (7.6 GB/s in results/2026-11-26-vm-f26m2-kernel-profile).
  const float beta1 = cfg.beta1, beta2 = cfg.beta2, lr = cfg.lr, eps = cfg.eps, wd = cfg.weight_decay,
              grad_scale = cfg.grad_scale;
  // The bias corrections as products: one division and one square root per element are the
  // loop's cost (divider and square root share one unit), not its 28 bytes; three divisions took
  // 2 % of gpt-tiny's step (Xeon family 6 model 207).
  const float inv_bc1 = 1.0f / bc1, inv_bc2 = 1.0f / bc2;
#pragma omp parallel for simd
  for (size_t i = 0; i < n; i++) {
    const float g = grads[i] * grad_scale;  // the same product a clipping pass would have stored
    const float mi = beta1 * m[i] + (1.0f - beta1) * g;
    const float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    const float m_hat = mi * inv_bc1;
    const float v_hat = vi * inv_bc2;
    params[i] -= lr * (m_hat / (std::sqrt(v_hat) + eps) + wd * params[i]);
  }
}

void sgd_update(float* params, const float* grads, float* momentum_buf, size_t n, const SGDConfig& cfg, long step) {
  profile::Scope scope("sgd_update", 4.0 * double(n), 20.0 * double(n));
  assert(step >= 1);
  assert(cfg.momentum == 0.0f || momentum_buf != nullptr);
  assert(!cfg.nesterov || (cfg.momentum > 0.0f && cfg.dampening == 0.0f));
  const bool use_momentum = cfg.momentum != 0.0f;
  const bool first = step == 1, nesterov = cfg.nesterov;
  const float wd = cfg.weight_decay, momentum = cfg.momentum, dampening = cfg.dampening,
              lr = cfg.lr;  // (as adamw_update)
#pragma omp parallel for simd
  for (size_t i = 0; i < n; i++) {
    float g = grads[i] + wd * params[i];
    if (use_momentum) {
      const float buf = first ? g : momentum * momentum_buf[i] + (1.0f - dampening) * g;
      momentum_buf[i] = buf;
      g = nesterov ? g + momentum * buf : buf;
    }
    params[i] -= lr * g;
  }
}

double sum_of_squares(const float* x, size_t n) {
  profile::Scope scope("sum_of_squares", 2.0 * double(n), 4.0 * double(n));
  // Blocks of a fixed size, each summed on one thread, their sums added in block order: the value
  // does not depend on the thread count, and the threads share the memory traffic (the one-thread
  // loop is bound by it: results/2026-11-30-vm-f6m207-kernel-profile).
  constexpr size_t kBlock = size_t(1) << 16;
  const size_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> block_sum(blocks);
#pragma omp parallel for schedule(static)
  for (size_t b = 0; b < blocks; b++) {
    const float* xb = x + b * kBlock;
    const size_t len = std::min(kBlock, n - b * kBlock);
    // Sixteen partial sums (four or two vector registers of doubles), so the adds do not wait on
    // one another: one accumulator held the loop to an add's latency per vector.
    constexpr size_t kLanes = 16;
    double lane[kLanes] = {};
    size_t i = 0;
    for (; i + kLanes <= len; i += kLanes) {
      for (size_t j = 0; j < kLanes; j++) lane[j] += double(xb[i + j]) * double(xb[i + j]);
    }
    for (; i < len; i++) lane[0] += double(xb[i]) * double(xb[i]);
    for (size_t half = kLanes / 2; half > 0; half /= 2) {
      for (size_t j = 0; j < half; j++) lane[j] += lane[j + half];
    }
    block_sum[b] = lane[0];
  }
  double s = 0;
  for (double v : block_sum) s += v;
  return s;
}

}  // namespace sp::kernels

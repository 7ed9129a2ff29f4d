// Optimizer steps over flat float arrays. Call once per parameter tensor (or once over one flat
// buffer holding all of them); weight decay applies to every element passed, so give tensors
// that should not decay (biases, layernorm gains) their own call with weight_decay = 0.
#pragma once

#include <cstddef>

namespace sp::kernels {

struct AdamWConfig {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;  // decoupled (AdamW), not added to the gradient
  // Each gradient is multiplied by this as it is read: gradient clipping's scale, taken here
  // instead of in a pass of its own over the gradients (1: no clipping).
  float grad_scale = 1.0f;
};

// AdamW (Loshchilov & Hutter), as torch.optim.AdamW, with g = grad_scale * grad:
//   m = beta1 m + (1 - beta1) g          v = beta2 v + (1 - beta2) g^2
//   m_hat = m / (1 - beta1^step)         v_hat = v / (1 - beta2^step)
//   param -= lr * (m_hat / (sqrt(v_hat) + eps) + weight_decay * param)
// params, grads, m, v: [n]; m and v start at zero and are updated in place.
// step: 1-based count of updates including this one (1 on the first call).
void adamw_update(float* params, const float* grads, float* m, float* v, size_t n, const AdamWConfig& cfg, long step);

struct SGDConfig {
  float lr = 0.1f;
  float momentum = 0.0f;
  float dampening = 0.0f;
  float weight_decay = 0.0f;  // L2, added to the gradient (coupled), as torch.optim.SGD
  bool nesterov = false;      // needs momentum > 0 and dampening == 0 (as in PyTorch)
};

// SGD with momentum, exactly torch.optim.SGD:
//   g = grad + weight_decay * param
//   if momentum != 0:  buf = (step == 1) ? g : momentum * buf + (1 - dampening) * g
//                      g = nesterov ? g + momentum * buf : buf
//   param -= lr * g
// params, grads: [n]; momentum_buf: [n], updated in place (may be nullptr when momentum == 0;
// its contents before step 1 are ignored). step: 1-based, as for adamw_update.
void sgd_update(float* params, const float* grads, float* momentum_buf, size_t n, const SGDConfig& cfg, long step);

// sum_i x[i]^2 in double, for the gradient norm before clipping. Fixed blocks summed on the
// threads, their sums added in block order: the same result for any thread count (the loop is
// memory-bound, and two threads move more memory than one).
double sum_of_squares(const float* x, size_t n);

}  // namespace sp::kernels

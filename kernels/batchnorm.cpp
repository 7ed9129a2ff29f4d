// Batch normalisation (training and evaluation mode) and ReLU over NCHW activations.
// See cnn.hpp for the contract. OpenMP runs over channels: each channel's N planes of HW
// contiguous floats are one work item, so every sum has a fixed order whatever the thread count.
#include <cmath>
#include <cstddef>
#include <type_traits>

#include "kernels/cnn.hpp"
#include "kernels/profile.hpp"

namespace sp::kernels {

namespace {

// batchnorm_forward_train, then + shortcut (when given) and max(., 0) (when Relu) in the same pass.
template <bool Relu>
void forward_train(float* out, float* mean, float* rstd, float* running_mean, float* running_var, const float* inp,
                   const float* shortcut, const float* gamma, const float* beta, int N, int C, int HW, float momentum,
                   float eps) {
  const double elements = double(N) * C * HW;
  // The ReLU adds one flop per element and no traffic: it is applied before the one store. The
  // shortcut adds a flop and a read.
  const char* name = shortcut ? "batchnorm_add_relu_forward" : Relu ? "batchnorm_relu_forward" : "batchnorm_forward";
  profile::Scope scope(name, (7 + Relu + (shortcut != nullptr)) * elements, (shortcut ? 12 : 8) * elements);
  const double M = double(N) * HW;
#pragma omp parallel for
  for (int c = 0; c < C; c++) {
    // One pass of sum and sum of squares. In double the cancellation in E[x^2] - E[x]^2 is
    // harmless for activations (it would take |mean| / std ~ 1e6 to lose float precision).
    double s = 0.0, ss = 0.0;
    for (int n = 0; n < N; n++) {
      const float* x = inp + (std::size_t(n) * C + c) * HW;
#pragma omp simd reduction(+ : s, ss)
      for (int i = 0; i < HW; i++) {
        const double v = x[i];
        s += v;
        ss += v * v;
      }
    }
    const double m = s / M;
    const double var = std::fmax(ss / M - m * m, 0.0);
    const float r = float(1.0 / std::sqrt(var + double(eps)));
    mean[c] = float(m);
    rstd[c] = r;
    if (running_mean != nullptr) {
      const double unbiased = M > 1 ? var * M / (M - 1) : var;
      running_mean[c] = (1.0f - momentum) * running_mean[c] + momentum * float(m);
      running_var[c] = (1.0f - momentum) * running_var[c] + momentum * float(unbiased);
    }
    // out = x * scale + shift with scale = gamma * rstd, shift = beta - mean * scale.
    const float scale = gamma[c] * r, shift = beta[c] - float(m) * scale;
    for (int n = 0; n < N; n++) {
      const std::size_t base = (std::size_t(n) * C + c) * HW;
      if (shortcut != nullptr) {
        // The values of batchnorm_forward_train, residual_forward and relu_forward in turn.
#pragma omp simd
        for (int i = 0; i < HW; i++) {
          const float y = inp[base + i] * scale + shift;
          const float sum = y + shortcut[base + i];
          out[base + i] = sum > 0.0f ? sum : 0.0f;
        }
        continue;
      }
#pragma omp simd
      for (int i = 0; i < HW; i++) {
        const float y = inp[base + i] * scale + shift;
        out[base + i] = Relu ? (y > 0.0f ? y : 0.0f) : y;
      }
    }
  }
}

}  // namespace

void batchnorm_forward_train(float* out, float* mean, float* rstd, float* running_mean, float* running_var,
                             const float* inp, const float* gamma, const float* beta, int N, int C, int HW,
                             float momentum, float eps) {
  forward_train<false>(out, mean, rstd, running_mean, running_var, inp, nullptr, gamma, beta, N, C, HW, momentum, eps);
}

void batchnorm_relu_forward_train(float* out, float* mean, float* rstd, float* running_mean, float* running_var,
                                  const float* inp, const float* gamma, const float* beta, int N, int C, int HW,
                                  float momentum, float eps) {
  forward_train<true>(out, mean, rstd, running_mean, running_var, inp, nullptr, gamma, beta, N, C, HW, momentum, eps);
}

void batchnorm_add_relu_forward_train(float* out, float* mean, float* rstd, float* running_mean, float* running_var,
                                      const float* inp, const float* shortcut, const float* gamma, const float* beta,
                                      int N, int C, int HW, float momentum, float eps) {
  forward_train<true>(out, mean, rstd, running_mean, running_var, inp, shortcut, gamma, beta, N, C, HW, momentum, eps);
}

void batchnorm_forward_eval(float* out, const float* inp, const float* gamma, const float* beta,
                            const float* running_mean, const float* running_var, int N, int C, int HW, float eps) {
  const double elements = double(N) * C * HW;
  profile::Scope scope("batchnorm_forward_eval", 4 * elements, 8 * elements);
#pragma omp parallel for collapse(2)
  for (int n = 0; n < N; n++) {
    for (int c = 0; c < C; c++) {
      const float scale = gamma[c] / std::sqrt(running_var[c] + eps);
      const float shift = beta[c] - running_mean[c] * scale;
      const std::size_t base = (std::size_t(n) * C + c) * HW;
#pragma omp simd
      for (int i = 0; i < HW; i++) out[base + i] = inp[base + i] * scale + shift;
    }
  }
}

namespace {

// batchnorm_backward; with Relu, relu_out's mask first, in the pass of the sums, written over dout
// (which is then not const) as relu_backward_inplace would.
template <bool Relu>
void backward_train(float* dinp, float* dgamma, float* dbeta, std::conditional_t<Relu, float*, const float*> dout,
                    const float* relu_out, const float* inp, const float* gamma, const float* mean, const float* rstd,
                    int N, int C, int HW, bool accumulate_dinp) {
  const double elements = double(N) * C * HW;
  // The mask adds a read of relu_out and a write of dout to the first pass.
  profile::Scope scope(Relu ? "batchnorm_relu_backward" : "batchnorm_backward", (Relu ? 11 : 10) * elements,
                       (Relu ? 24 : 16) * elements);
  const double M = double(N) * HW;
#pragma omp parallel for
  for (int c = 0; c < C; c++) {
    const float m = mean[c], r = rstd[c];
    double sum_dy = 0.0, sum_dy_xhat = 0.0;
    for (int n = 0; n < N; n++) {
      const std::size_t base = (std::size_t(n) * C + c) * HW;
      float a = 0.0f, b = 0.0f;  // per-plane float sums (vectorised), accumulated in double
#pragma omp simd reduction(+ : a, b)
      for (int i = 0; i < HW; i++) {
        float dy = dout[base + i];
        if constexpr (Relu) {
          dy = relu_out[base + i] > 0.0f ? dy : 0.0f;
          dout[base + i] = dy;
        }
        a += dy;
        b += dy * (inp[base + i] - m);
      }
      sum_dy += a;
      sum_dy_xhat += double(b) * r;
    }
    if (dbeta != nullptr) dbeta[c] += float(sum_dy);
    if (dgamma != nullptr) dgamma[c] += float(sum_dy_xhat);
    // dinp += gamma * rstd * (dy - mean(dy) - xhat * mean(dy * xhat))
    const float k = gamma[c] * r;
    const float mdy = float(sum_dy / M), mdyx = float(sum_dy_xhat / M);
    for (int n = 0; n < N; n++) {
      const std::size_t base = (std::size_t(n) * C + c) * HW;
      if (accumulate_dinp) {
#pragma omp simd
        for (int i = 0; i < HW; i++) {
          const float xhat = (inp[base + i] - m) * r;
          dinp[base + i] += k * (dout[base + i] - mdy - xhat * mdyx);
        }
      } else {
#pragma omp simd
        for (int i = 0; i < HW; i++) {
          const float xhat = (inp[base + i] - m) * r;
          dinp[base + i] = k * (dout[base + i] - mdy - xhat * mdyx);
        }
      }
    }
  }
}

}  // namespace

void batchnorm_backward(float* dinp, float* dgamma, float* dbeta, const float* dout, const float* inp,
                        const float* gamma, const float* mean, const float* rstd, int N, int C, int HW,
                        bool accumulate_dinp) {
  backward_train<false>(dinp, dgamma, dbeta, dout, nullptr, inp, gamma, mean, rstd, N, C, HW, accumulate_dinp);
}

void batchnorm_relu_backward(float* dinp, float* dgamma, float* dbeta, float* dout, const float* relu_out,
                             const float* inp, const float* gamma, const float* mean, const float* rstd, int N, int C,
                             int HW, bool accumulate_dinp) {
  backward_train<true>(dinp, dgamma, dbeta, dout, relu_out, inp, gamma, mean, rstd, N, C, HW, accumulate_dinp);
}

void batchnorm_backward_eval(float* dinp, float* dgamma, float* dbeta, const float* dout, const float* inp,
                             const float* gamma, const float* mean, const float* rstd, int N, int C, int HW,
                             bool accumulate_dinp) {
  const double elements = double(N) * C * HW;
  profile::Scope scope("batchnorm_backward_eval", 5 * elements, 16 * elements);
#pragma omp parallel for
  for (int c = 0; c < C; c++) {
    const float m = mean[c], r = rstd[c], k = gamma[c] * r;
    double sum_dy = 0.0, sum_dy_xhat = 0.0;
    for (int n = 0; n < N; n++) {
      const std::size_t base = (std::size_t(n) * C + c) * HW;
      float a = 0.0f, b = 0.0f;
#pragma omp simd reduction(+ : a, b)
      for (int i = 0; i < HW; i++) {
        const float dy = dout[base + i];
        a += dy;
        b += dy * (inp[base + i] - m);
        dinp[base + i] = (accumulate_dinp ? dinp[base + i] : 0.0f) + k * dy;
      }
      sum_dy += a;
      sum_dy_xhat += double(b) * r;
    }
    if (dbeta != nullptr) dbeta[c] += float(sum_dy);
    if (dgamma != nullptr) dgamma[c] += float(sum_dy_xhat);
  }
}

void relu_forward(float* out, const float* inp, std::size_t n) {
  profile::Scope scope("relu_forward", double(n), 8.0 * double(n));
#pragma omp parallel for simd
  for (std::size_t i = 0; i < n; i++) out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

void relu_backward(float* dinp, const float* x, const float* dout, std::size_t n) {
  profile::Scope scope("relu_backward", double(n), 16.0 * double(n));
#pragma omp parallel for simd
  for (std::size_t i = 0; i < n; i++) dinp[i] += x[i] > 0.0f ? dout[i] : 0.0f;
}

void relu_backward_inplace(float* d, const float* out, std::size_t n) {
  profile::Scope scope("relu_backward", double(n), 12.0 * double(n));
#pragma omp parallel for simd
  for (std::size_t i = 0; i < n; i++) d[i] = out[i] > 0.0f ? d[i] : 0.0f;
}

}  // namespace sp::kernels

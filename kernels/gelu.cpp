// GELU (tanh approximation) forward and backward over a flat array: the MLP's hidden activation,
// the largest of a transformer block (B*T*4C), so its cost is that of the exp per element.
//
// GELU(x) = 0.5 x (1 + tanh(u)) = x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3), and
// sigmoid(2u) = 1 / (1 + exp(-2u)). The exp is inlined (exp_clamped.hpp) rather than glibc's.
// Compiled once per instruction-set variant (kernels/variants.hpp; gelu_v4.cpp
// with -march=x86-64-v4): 16 lanes run this ~2.5x faster than libmvec's 8 on Zen 5. The file is
// built with -ffast-math so the loops vectorise; they are elementwise and, by the clamp below,
// free of infinities and NaNs for finite input. Only builtins are called (no comdat copies of
// std:: inlines in the AVX-512 object: tests/unit/isa.sh).
#include <cstddef>
#include <cstdint>

#include "kernels/exp_clamped.hpp"
#include "kernels/variants.hpp"

#ifndef SP_KERNEL_VARIANT
#define SP_KERNEL_VARIANT baseline
#endif

namespace sp::kernels::detail::SP_KERNEL_VARIANT {

namespace {
constexpr float kSqrt2OverPi = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kGeluCubic = 0.044715f;
// exp's argument is clamped to +-80: exp(80) ~ 5.5e34 keeps 1 + exp finite and 2^n normal, and
// sigmoid is 0 or 1 to float precision well before (|2u| > 17).
constexpr float kExpClamp = 80.0f;

// sigmoid(2u) = 1 / (1 + exp(-2u)) for GELU's u(x).
inline float gelu_sigmoid(float x) {
  const float minus_2u = -2.0f * kSqrt2OverPi * (x + kGeluCubic * x * x * x);
  return 1.0f / (1.0f + exp_clamped(__builtin_fminf(__builtin_fmaxf(minus_2u, -kExpClamp), kExpClamp)));
}

// GELU'(x) = d/dx [x s(2u)] = s + x s (1 - s) d(2u)/dx, given s = sigmoid(2u(x)).
inline float gelu_slope(float x, float s) {
  const float d2u_dx = 2.0f * kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * x * x);
  return s + x * s * (1.0f - s) * d2u_dx;
}

inline float gelu_derivative(float x) { return gelu_slope(x, gelu_sigmoid(x)); }

// Accumulate is a template parameter: with a run-time `accumulate ? dinp[i] : 0` in the loop GCC 12
// does not vectorise it at all.
template <bool Accumulate>
void gelu_backward_loop(float* dinp, const float* inp, const float* dout, std::size_t N) {
#pragma omp parallel for simd
  for (std::size_t i = 0; i < N; i++) {
    const float grad = gelu_derivative(inp[i]) * dout[i];
    if constexpr (Accumulate) {
      dinp[i] += grad;
    } else {
      dinp[i] = grad;
    }
  }
}
}  // namespace

void gelu_forward(float* out, const float* inp, std::size_t N) {
#pragma omp parallel for simd
  for (std::size_t i = 0; i < N; i++) out[i] = inp[i] * gelu_sigmoid(inp[i]);
}

void gelu_bias_forward(float* out, float* inp, const float* bias, std::size_t rows, std::size_t columns) {
#pragma omp parallel for
  for (std::size_t r = 0; r < rows; r++) {
    float* x = inp + r * columns;
    float* y = out + r * columns;
#pragma omp simd
    for (std::size_t c = 0; c < columns; c++) {
      const float h = x[c] + bias[c];
      const float s = gelu_sigmoid(h);
      x[c] = gelu_slope(h, s);
      y[c] = h * s;
    }
  }
}

void gelu_backward_rows(float* dinp, float* column_sums, const float* slope, const float* dout, std::size_t rows,
                        std::size_t columns) {
  for (std::size_t c = 0; c < columns; c++) column_sums[c] = 0.0f;
  for (std::size_t r = 0; r < rows; r++) {
    const float* slope_row = slope + r * columns;
    const float* dy_row = dout + r * columns;
    float* dx_row = dinp + r * columns;
#pragma omp simd
    for (std::size_t c = 0; c < columns; c++) {
      const float grad = slope_row[c] * dy_row[c];
      dx_row[c] = grad;
      column_sums[c] += grad;
    }
  }
}

void gelu_backward(float* dinp, const float* inp, const float* dout, std::size_t N, bool accumulate) {
  if (accumulate) {
    gelu_backward_loop<true>(dinp, inp, dout, N);
  } else {
    gelu_backward_loop<false>(dinp, inp, dout, N);
  }
}

}  // namespace sp::kernels::detail::SP_KERNEL_VARIANT

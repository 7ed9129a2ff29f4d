#include "kernels/crossentropy.hpp"

#include <cmath>
#include <cstddef>
#include "kernels/profile.hpp"

namespace sp::kernels {

void softmax_crossentropy_forward(float* losses, float* probs, const float* logits, const int* targets, int B, int T,
                                  int V) {
  const double NV = double(B) * T * V;
  profile::Scope scope("crossentropy_forward", 4 * NV, 8 * NV);
  const int N = B * T;
#pragma omp parallel for
  for (int n = 0; n < N; n++) {
    const float* z = logits + (size_t)n * V;
    float* p = probs + (size_t)n * V;
    // Vector loops, as the attention's softmax: -ffast-math for glibc's vector expf
    // (kernels/CMakeLists.txt), so the max starts from a logit, not -INFINITY.
    float maxval = z[0];
#pragma omp simd reduction(max : maxval)
    for (int v = 0; v < V; v++) maxval = z[v] > maxval ? z[v] : maxval;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int v = 0; v < V; v++) {
      p[v] = std::exp(z[v] - maxval);
      sum += p[v];
    }
    const float inv_sum = 1.0f / sum;
#pragma omp simd
    for (int v = 0; v < V; v++) p[v] *= inv_sum;
    // -log softmax(z)[target] = log(sum_v exp(z_v - max)) + max - z[target]
    losses[n] = std::log(sum) + maxval - z[targets[n]];
  }
}

void softmax_crossentropy_backward(float* dlogits, const float* probs, const int* targets, float dloss, int B, int T,
                                   int V, bool accumulate) {
  const double NV = double(B) * T * V;
  profile::Scope scope("crossentropy_backward", 2 * NV, 12 * NV);
  const int N = B * T;
#pragma omp parallel for
  for (int n = 0; n < N; n++) {
    const float* p = probs + (size_t)n * V;
    float* dz = dlogits + (size_t)n * V;
    for (int v = 0; v < V; v++) dz[v] = (accumulate ? dz[v] : 0.0f) + dloss * p[v];
    dz[targets[n]] -= dloss;
  }
}

}  // namespace sp::kernels

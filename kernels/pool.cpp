// Max, average and global-average pooling over NCHW activations (see cnn.hpp). OpenMP runs over
// the N*C planes, which are independent in both directions.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>

#include "kernels/cnn.hpp"
#include "kernels/profile.hpp"

namespace sp::kernels {

namespace {
inline std::size_t plane_in(const Pool2dShape& s) { return std::size_t(s.H) * s.W; }
inline std::size_t plane_out(const Pool2dShape& s) { return std::size_t(s.out_h()) * s.out_w(); }

// Calls at(p) for every plane p < planes (N * C), the planes in parallel: each kernel below works
// plane by plane.
template <typename AtPlane>
void for_each_plane(int planes, const AtPlane& at) {
#pragma omp parallel for
  for (int p = 0; p < planes; p++) at(p);
}

// Calls at(p, oy, ox, o) for every output (oy, ox) of every plane p, o its index in the whole
// [N, C, OH, OW] output; the planes in parallel.
template <typename AtOutput>
void for_each_output(const Pool2dShape& s, const AtOutput& at) {
  const int OH = s.out_h(), OW = s.out_w();
  for_each_plane(s.N * s.C, [&](int p) {
    std::size_t o = std::size_t(p) * OH * OW;
    for (int oy = 0; oy < OH; oy++)
      for (int ox = 0; ox < OW; ox++) at(std::size_t(p), oy, ox, o++);
  });
}
}  // namespace

void maxpool2d_forward(float* out, int* argmax, const float* inp, const Pool2dShape& s) {
  const double in_n = double(s.N) * s.C * s.H * s.W, out_n = double(s.N) * s.C * s.out_h() * s.out_w();
  profile::Scope scope("maxpool2d_forward", out_n * s.K * s.K, 4 * (in_n + 2 * out_n));
  assert(2 * s.pad <= s.K);
  for_each_output(s, [&](std::size_t p, int oy, int ox, std::size_t o) {
    const float* x = inp + p * plane_in(s);
    const int y0 = oy * s.stride - s.pad, x0 = ox * s.stride - s.pad;
    float best = -INFINITY;
    int best_i = -1;
    for (int iy = y0 < 0 ? 0 : y0; iy < y0 + s.K && iy < s.H; iy++) {
      for (int ix = x0 < 0 ? 0 : x0; ix < x0 + s.K && ix < s.W; ix++) {
        const float v = x[iy * s.W + ix];
        // '>' keeps the first maximum; '|| best_i < 0' accepts -inf or NaN inputs.
        if (v > best || best_i < 0) {
          best = v;
          best_i = iy * s.W + ix;
        }
      }
    }
    out[o] = best;
    argmax[o] = best_i;
  });
}

void maxpool2d_backward(float* dinp, const float* dout, const int* argmax, const Pool2dShape& s) {
  const double in_n = double(s.N) * s.C * s.H * s.W, out_n = double(s.N) * s.C * s.out_h() * s.out_w();
  profile::Scope scope("maxpool2d_backward", out_n, 4 * (2 * in_n + 2 * out_n));
  const std::size_t po = plane_out(s);
  for_each_plane(s.N * s.C, [&](int p) {
    float* dx = dinp + p * plane_in(s);
    const float* dy = dout + p * po;
    const int* am = argmax + p * po;
    for (std::size_t i = 0; i < po; i++) dx[am[i]] += dy[i];
  });
}

namespace {
// Window of output (oy, ox) clipped to the image, and PyTorch's count_include_pad divisor.
struct Window {
  int y0, y1, x0, x1;
  float inv_count;
};
inline Window window(const Pool2dShape& s, int oy, int ox) {
  int y0 = oy * s.stride - s.pad, x0 = ox * s.stride - s.pad;
  int y1 = std::min(y0 + s.K, s.H + s.pad), x1 = std::min(x0 + s.K, s.W + s.pad);
  const int count = (y1 - y0) * (x1 - x0);
  y0 = std::max(y0, 0);
  x0 = std::max(x0, 0);
  y1 = std::min(y1, s.H);
  x1 = std::min(x1, s.W);
  return {y0, y1, x0, x1, 1.0f / float(count)};
}
}  // namespace

void avgpool2d_forward(float* out, const float* inp, const Pool2dShape& s) {
  const double in_n = double(s.N) * s.C * s.H * s.W, out_n = double(s.N) * s.C * s.out_h() * s.out_w();
  profile::Scope scope("avgpool2d_forward", out_n * s.K * s.K, 4 * (in_n + out_n));
  for_each_output(s, [&](std::size_t p, int oy, int ox, std::size_t o) {
    const float* x = inp + p * plane_in(s);
    const Window w = window(s, oy, ox);
    float sum = 0.0f;
    for (int iy = w.y0; iy < w.y1; iy++)
      for (int ix = w.x0; ix < w.x1; ix++) sum += x[iy * s.W + ix];
    out[o] = sum * w.inv_count;
  });
}

void avgpool2d_backward(float* dinp, const float* dout, const Pool2dShape& s) {
  const double in_n = double(s.N) * s.C * s.H * s.W, out_n = double(s.N) * s.C * s.out_h() * s.out_w();
  profile::Scope scope("avgpool2d_backward", out_n * s.K * s.K, 4 * (2 * in_n + out_n));
  // Overlapping windows add into the same dinp elements, but only within a plane: one thread's.
  for_each_output(s, [&](std::size_t p, int oy, int ox, std::size_t o) {
    float* dx = dinp + p * plane_in(s);
    const Window w = window(s, oy, ox);
    const float g = dout[o] * w.inv_count;
    for (int iy = w.y0; iy < w.y1; iy++)
      for (int ix = w.x0; ix < w.x1; ix++) dx[iy * s.W + ix] += g;
  });
}

void global_avgpool_forward(float* out, const float* inp, int N, int C, int HW) {
  const double in_n = double(N) * C * HW;
  profile::Scope scope("global_avgpool_forward", in_n, 4 * in_n);
  const float inv = 1.0f / float(HW);
  for_each_plane(N * C, [&](int p) {
    const float* x = inp + std::size_t(p) * HW;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int i = 0; i < HW; i++) sum += x[i];
    out[p] = sum * inv;
  });
}

void global_avgpool_backward(float* dinp, const float* dout, int N, int C, int HW) {
  const double in_n = double(N) * C * HW;
  profile::Scope scope("global_avgpool_backward", in_n, 8 * in_n);
  const float inv = 1.0f / float(HW);
  for_each_plane(N * C, [&](int p) {
    float* dx = dinp + std::size_t(p) * HW;
    const float g = dout[p] * inv;
#pragma omp simd
    for (int i = 0; i < HW; i++) dx[i] += g;
  });
}

}  // namespace sp::kernels

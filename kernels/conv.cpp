// 2-D convolution: 3x3 stride-1 pad-1 shapes go to the direct kernels of conv_direct.cpp; every
// other shape is lowered here to SGEMM through im2col (forward, weight gradient) and col2im
// (input gradient), one image at a time. See cnn.hpp for the contract.
//
// Why per image and not one GEMM over the batch: the per-image product
//   out[n] [OC, OH*OW] = weight [OC, C*KH*KW] · col [C*KH*KW, OH*OW]
// writes NCHW directly (no transpose of the output or of dout), keeps the im2col matrix small
// enough to stay in L2 for CIFAR shapes (<= 0.6 MB), and makes images independent work items
// for OpenMP. Measured on ResNet-20 (batch 32, 1 thread): one GEMM over [K, N*OH*OW] was 30%
// SLOWER per step (432 vs 337 ms): OpenBLAS already runs these shapes at ~45 GFLOP/s even at 64
// columns, while the batch-wide im2col matrix (19 MB for the first stage) and the transposes
// went through DRAM instead of L2.
//
// The forward's im2col matrices can be kept by the caller (the col argument) and handed to
// backward, which then does not recompute them (ResNet-20 step: ~4% faster, within the noise of
// this shared machine; im2col had been ~16% of a step, half of it in backward).
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "kernels/cnn.hpp"
#include "kernels/conv_direct.hpp"
#include "kernels/conv_onednn.hpp"
#include "kernels/gemm.hpp"
#include "kernels/profile.hpp"

namespace sp::kernels {

namespace {

// Range [lo, hi) of output columns x whose input column x*stride - pad + j lies in [0, W).
inline void valid_range(int W, int OW, int stride, int pad, int j, int& lo, int& hi) {
  const int a = pad - j;  // need x*stride >= a
  lo = a <= 0 ? 0 : (a + stride - 1) / stride;
  const int b = W - 1 + pad - j;  // need x*stride <= b
  hi = b < 0 ? 0 : std::min(OW, b / stride + 1);
  lo = std::min(lo, hi);
}

// col rows of length P = OH*OW with row stride ld: row (c, i, j), column (y, x) holds
// img[c, y*s - pad + i, x*s - pad + j] or 0 outside the image.
void im2col(float* col, std::size_t ld, const float* img, const Conv2dShape& s) {
  const int OH = s.out_h(), OW = s.out_w(), H = s.H, W = s.W;
  for (int c = 0; c < s.C; c++) {
    const float* plane = img + std::size_t(c) * H * W;
    for (int i = 0; i < s.KH; i++) {
      for (int j = 0; j < s.KW; j++) {
        float* row = col + (std::size_t(c * s.KH + i) * s.KW + j) * ld;
        int lo, hi;
        valid_range(W, OW, s.stride, s.pad, j, lo, hi);
        for (int y = 0; y < OH; y++) {
          float* dst = row + std::size_t(y) * OW;
          const int iy = y * s.stride - s.pad + i;
          if (iy < 0 || iy >= H) {
            for (int x = 0; x < OW; x++) dst[x] = 0.0f;
            continue;
          }
          const float* src = plane + std::size_t(iy) * W - s.pad + j;  // src[x*stride] = pixel
          // Plain loops, not memcpy/memset: rows are short (OW = 8..32 floats for CIFAR) and
          // the library calls cost more than the copy.
          for (int x = 0; x < lo; x++) dst[x] = 0.0f;
          if (s.stride == 1) {
#pragma omp simd
            for (int x = lo; x < hi; x++) dst[x] = src[x];
          } else {
            for (int x = lo; x < hi; x++) dst[x] = src[x * s.stride];
          }
          for (int x = hi; x < OW; x++) dst[x] = 0.0f;
        }
      }
    }
  }
}

// The adjoint of im2col: img[c, iy, ix] += every col entry that im2col copied from it.
void col2im_add(float* img, const float* col, std::size_t ld, const Conv2dShape& s) {
  const int OH = s.out_h(), OW = s.out_w(), H = s.H, W = s.W;
  for (int c = 0; c < s.C; c++) {
    float* plane = img + std::size_t(c) * H * W;
    for (int i = 0; i < s.KH; i++) {
      for (int j = 0; j < s.KW; j++) {
        const float* row = col + (std::size_t(c * s.KH + i) * s.KW + j) * ld;
        int lo, hi;
        valid_range(W, OW, s.stride, s.pad, j, lo, hi);
        for (int y = 0; y < OH; y++) {
          const int iy = y * s.stride - s.pad + i;
          if (iy < 0 || iy >= H) continue;
          const float* src = row + std::size_t(y) * OW;
          float* dst = plane + std::size_t(iy) * W - s.pad + j;
          if (s.stride == 1) {
#pragma omp simd
            for (int x = lo; x < hi; x++) dst[x] += src[x];
          } else {
            for (int x = lo; x < hi; x++) dst[x * s.stride] += src[x];
          }
        }
      }
    }
  }
}

// The calling thread's scratch buffers (slot 0..2), grown on demand and kept (see cnn.hpp).
float* scratch(int slot, std::size_t n) {
  thread_local std::vector<float> buf[1];
  if (buf[slot].size() < n) buf[slot].resize(n);
  return buf[slot].data();
}

// Loops over images in parallel only when there are several images and several threads.
inline bool images_in_parallel(int N) { return N > 1 && omp_get_max_threads() > 1; }

}  // namespace

std::size_t conv2d_col_numel(const Conv2dShape& s) {
  // Only the GEMM backward reads the im2col matrices the forward keeps.
  if (detail::conv2d_onednn_applies(s) || detail::conv2d_direct_applies(s)) return 0;
  return std::size_t(s.C) * s.KH * s.KW * s.N * std::size_t(s.out_h()) * s.out_w();
}

void conv2d_forward(float* out, const float* inp, const float* weight, const float* bias, const Conv2dShape& s,
                    float* col) {
  const double io = double(s.N) * (double(s.C) * s.H * s.W + double(s.OC) * s.out_h() * s.out_w());
  profile::Scope scope("conv2d_forward", 2 * s.macs(), 4 * (io + double(s.OC) * s.C * s.KH * s.KW));
  if (detail::conv2d_onednn_applies(s)) return detail::conv2d_onednn_forward(out, inp, weight, bias, s);
  if (detail::conv2d_direct_applies(s)) return detail::conv2d_direct_forward(out, inp, weight, bias, s);
  const int P = s.out_h() * s.out_w();
  const int K = s.C * s.KH * s.KW;
  const std::size_t in_img = std::size_t(s.C) * s.H * s.W, out_img = std::size_t(s.OC) * P;
  const std::size_t col_img = std::size_t(K) * P;
  auto one_image = [&](int n) {
    float* c = col != nullptr ? col + n * col_img : scratch(0, col_img);
    im2col(c, std::size_t(P), inp + n * in_img, s);
    float* y = out + n * out_img;
    float beta = 0.0f;
    if (bias != nullptr) {  // prefill with the bias and let the GEMM add to it
      for (int o = 0; o < s.OC; o++) std::fill(y + std::size_t(o) * P, y + std::size_t(o + 1) * P, bias[o]);
      beta = 1.0f;
    }
    sgemm(false, false, s.OC, P, K, 1.0f, weight, K, c, P, beta, y, P);
  };
  if (images_in_parallel(s.N)) {
#pragma omp parallel for schedule(static)
    for (int n = 0; n < s.N; n++) one_image(n);
  } else {
    for (int n = 0; n < s.N; n++) one_image(n);
  }
}

namespace {

// conv2d_backward's dinp and dweight through SGEMM: per image dweight_acc += dout[n] · col^T,
// then dinp[n] (+)= col2im(weight^T · dout[n]).
void gemm_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight,
                   const Conv2dShape& s, const float* col, bool accumulate_dinp) {
  const int P = s.out_h() * s.out_w();
  const int K = s.C * s.KH * s.KW;
  const std::size_t in_img = std::size_t(s.C) * s.H * s.W, out_img = std::size_t(s.OC) * P;
  const std::size_t col_img = std::size_t(K) * P, wnum = std::size_t(s.OC) * K;

  auto one_image = [&](int n, float* dweight_acc) {
    const float* dy = dout + n * out_img;
    const float* c = col != nullptr ? col + n * col_img : nullptr;
    float* work = scratch(0, col_img);
    if (c == nullptr) {
      im2col(work, std::size_t(P), inp + n * in_img, s);
      c = work;
    }
    sgemm(false, true, s.OC, K, P, 1.0f, dy, P, c, P, 1.0f, dweight_acc, K);
    if (dinp == nullptr) return;
    float* dx = dinp + n * in_img;
    // dcol = weight^T [K, OC] · dout[n] [OC, P] (the scratch is free again), then scattered.
    sgemm(true, false, K, P, s.OC, 1.0f, weight, K, dy, P, 0.0f, work, P);
    if (!accumulate_dinp) std::fill(dx, dx + in_img, 0.0f);
    col2im_add(dx, work, std::size_t(P), s);
  };

  if (images_in_parallel(s.N)) {
    // Private dweight partial sums per thread, added in thread order afterwards (see cnn.hpp).
    const int T = omp_get_max_threads();
    thread_local std::vector<float> partial;
    partial.assign(std::size_t(T) * wnum, 0.0f);
    float* part = partial.data();
    int used = 1;
#pragma omp parallel
    {
      const int t = omp_get_thread_num();
#pragma omp single
      used = omp_get_num_threads();
#pragma omp for schedule(static)
      for (int n = 0; n < s.N; n++) one_image(n, part + std::size_t(t) * wnum);
    }
    for (int t = 0; t < used; t++) {
      const float* pt = part + std::size_t(t) * wnum;
#pragma omp parallel for simd
      for (std::size_t i = 0; i < wnum; i++) dweight[i] += pt[i];
    }
  } else {
    for (int n = 0; n < s.N; n++) one_image(n, dweight);
  }
}

}  // namespace

void conv2d_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, const Conv2dShape& s, const float* col, bool accumulate_dinp) {
  const double in_n = double(s.N) * s.C * s.H * s.W, out_n = double(s.N) * s.OC * s.out_h() * s.out_w(),
               w_n = double(s.OC) * s.C * s.KH * s.KW;
  profile::Scope scope("conv2d_backward", (dinp ? 4 : 2) * s.macs(),
                       4 * (out_n + in_n + 2 * w_n + (dinp ? w_n + 2 * in_n : 0)));
  if (detail::conv2d_onednn_applies(s))
    detail::conv2d_onednn_backward(dinp, dweight, dout, inp, weight, s, accumulate_dinp);
  else if (detail::conv2d_direct_applies(s))
    detail::conv2d_direct_backward(dinp, dweight, dout, inp, weight, s, accumulate_dinp);
  else
    gemm_backward(dinp, dweight, dout, inp, weight, s, col, accumulate_dinp);

  if (dbias != nullptr) {
    const int P = s.out_h() * s.out_w();
    const std::size_t out_img = std::size_t(s.OC) * P;
#pragma omp parallel for
    for (int o = 0; o < s.OC; o++) {
      double acc = 0.0;
      for (int n = 0; n < s.N; n++) {
        const float* row = dout + n * out_img + std::size_t(o) * P;
        float a = 0.0f;
#pragma omp simd reduction(+ : a)
        for (int p = 0; p < P; p++) a += row[p];
        acc += a;
      }
      dbias[o] += float(acc);
    }
  }
}

}  // namespace sp::kernels

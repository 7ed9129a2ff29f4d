// Direct 3x3 stride-1 pad-1 convolution in the "flat" padded layout (see conv_direct.hpp).
//
// Flat layout of one image: each channel plane is the zero-padded image, (H+2) rows of
// Wp = W+2 floats, stored row after row, followed by zeros up to the plane stride. Output pixel
// (y, x) has flat index q = y*Wp + x, and its 3x3 window starts at padded index q, so
//   out[o][q] = sum_c sum_{i,j} w[o][c][i][j] * in[c][q + i*Wp + j]
// holds for every q in [0, H*Wp): a 1-D correlation with nine fixed shifts. The two columns
// x = W, W+1 of every row are computed too and thrown away (6% extra work at 32 pixels wide, 20%
// at 8): the price of loops with no edge cases. The input gradient is the same correlation of
// the padded dout with the kernel flipped and transposed; the weight gradient correlates the
// padded dout with the padded input (dout's padding columns are zero, so garbage q add nothing).
//
// Vectors are GCC vector extensions of the widest width the target has (16 floats with
// AVX-512); the register tile is GO output channels x XV vectors of q, chosen per shape so
// H*Wp is covered with the least rounding.
#include "kernels/conv_direct.hpp"

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

namespace sp::kernels::detail {

namespace {

#if defined(__AVX512F__)
constexpr int VL = 16;      // floats per vector
constexpr int kMaxXV = 6;   // GO * XV accumulators + XV inputs + 1 broadcast <= 32 registers
#elif defined(__AVX__)
constexpr int VL = 8;
constexpr int kMaxXV = 3;   // 16 registers
#else
constexpr int VL = 4;
constexpr int kMaxXV = 3;
#endif
constexpr int GO = 4;       // output channels per forward tile
constexpr int GW = 3;       // output channels per weight-gradient tile (3 x 9 accumulators)
constexpr int T = 9;        // taps of a 3x3 kernel

typedef float vf __attribute__((vector_size(VL * sizeof(float))));
inline vf vload(const float* p) { vf v; std::memcpy(&v, p, sizeof v); return v; }
inline void vstore(float* p, vf v) { std::memcpy(p, &v, sizeof v); }
// x - (+0) is x for every x, -0 included, so this folds to one broadcast (vf{} + x cannot: it
// must turn -0 into +0).
inline vf splat(float x) { return x - vf{}; }
inline float hsum(vf v) {
  float s = 0.0f;
  for (int l = 0; l < VL; ++l) s += v[l];
  return s;
}

std::size_t round_up(std::size_t n, std::size_t m) { return (n + m - 1) / m * m; }

// Geometry of one image in the flat layout.
struct Flat {
  int H, W, Wp;
  std::size_t Q;      // H * Wp: flat indices of the output rows (incl. 2 garbage columns each)
  int xv;             // vectors per tile
  std::size_t Qr;     // Q rounded up to whole tiles
  std::size_t plane;  // floats per padded plane: all of Qr's windows stay inside and read zeros
  Flat(int h, int w) : H(h), W(w), Wp(w + 2), Q(std::size_t(h) * (w + 2)) {
    const std::size_t qv = (Q + VL - 1) / VL;
    xv = 1;  // the most vectors per tile among those with the least rounding
    for (int x = 2; x <= kMaxXV; ++x)
      if (round_up(qv, x) <= round_up(qv, xv)) xv = x;
    Qr = round_up(Q, std::size_t(xv) * VL);
    plane = round_up(Qr + 2 * std::size_t(Wp) + 2, VL);
  }
};

// dst: C planes in the flat layout (borders and tail zero); src: [C, H, W].
void pad_planes(float* dst, const float* src, int C, const Flat& f) {
  for (int c = 0; c < C; ++c) {
    float* p = dst + c * f.plane;
    const float* s = src + std::size_t(c) * f.H * f.W;
    std::fill(p, p + f.Wp + 1, 0.0f);  // top row and the first row's left border
    for (int y = 0; y < f.H; ++y) {
      float* row = p + std::size_t(y + 1) * f.Wp + 1;
      const float* srow = s + std::size_t(y) * f.W;
      // A loop, not std::copy: rows are 8..32 floats and the memmove call costs more than that.
#pragma omp simd
      for (int x = 0; x < f.W; ++x) row[x] = srow[x];
      row[f.W] = row[f.W + 1] = 0.0f;  // right border, next row's left border
    }
    std::fill(p + std::size_t(f.H + 1) * f.Wp + 1, p + f.plane, 0.0f);
  }
}

// out[g][q] = sum_c sum_t wpk[c][t][g] * in[c][q + tap(t)] for g < GO, q in [0, f.Qr):
// GO output planes of f.Qr floats from Cin padded input planes.
template <int XV>
void flat_conv_tile_rows(float* out, const float* in, int Cin, const float* wpk, const Flat& f) {
  const std::ptrdiff_t Wp = f.Wp;
  for (std::size_t q0 = 0; q0 < f.Qr; q0 += XV * VL) {
    vf acc[GO][XV] = {};
    for (int c = 0; c < Cin; ++c) {
      const float* src = in + c * f.plane + q0;
      const float* w = wpk + std::size_t(c) * T * GO;
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
          vf x[XV];
          for (int v = 0; v < XV; ++v) x[v] = vload(src + i * Wp + j + v * VL);
          for (int g = 0; g < GO; ++g) {
            const vf wb = splat(w[(i * 3 + j) * GO + g]);
            for (int v = 0; v < XV; ++v) acc[g][v] += wb * x[v];
          }
        }
      }
    }
    for (int g = 0; g < GO; ++g)
      for (int v = 0; v < XV; ++v) vstore(out + g * f.Qr + q0 + v * VL, acc[g][v]);
  }
}

void flat_conv_tile(float* out, const float* in, int Cin, const float* wpk, const Flat& f) {
  switch (f.xv) {
    case 1: return flat_conv_tile_rows<1>(out, in, Cin, wpk, f);
    case 2: return flat_conv_tile_rows<2>(out, in, Cin, wpk, f);
    case 3: return flat_conv_tile_rows<3>(out, in, Cin, wpk, f);
#if defined(__AVX512F__)
    case 4: return flat_conv_tile_rows<4>(out, in, Cin, wpk, f);
    case 5: return flat_conv_tile_rows<5>(out, in, Cin, wpk, f);
    case 6: return flat_conv_tile_rows<6>(out, in, Cin, wpk, f);
#endif
  }
}

// The calling thread's scratch (slot 0..3), grown on demand and kept: no allocation (and no
// page faults of fresh mmap'ed blocks) in the steady state.
float* scratch(int slot, std::size_t n) {
  thread_local std::vector<float> buf[4];
  if (buf[slot].size() < n) buf[slot].resize(n);
  return buf[slot].data();
}

// Weights for a flat convolution with Cout outputs and Cin inputs, as tiles [Cout/GO][Cin][T][GO]
// (Cout rounded up to GO with zero weights) in the calling thread's scratch slot 3.
// get(o, c, t) is the weight of output o, input c, tap t (t = 3i + j).
template <class Get>
const float* pack_weights(int Cout, int Cin, Get get) {
  const std::size_t tiles = (Cout + GO - 1) / GO, n = tiles * Cin * T * GO;
  float* p = scratch(3, n);
  std::fill(p, p + n, 0.0f);
  for (int o = 0; o < Cout; ++o)
    for (int c = 0; c < Cin; ++c)
      for (int t = 0; t < T; ++t) p[((std::size_t(o / GO) * Cin + c) * T + t) * GO + o % GO] = get(o, c, t);
  return p;
}

// One image: out [Cout, H, W] (+)= flat convolution of `in` (Cin padded planes) with packed
// weights, plus bias when given. scratch: GO * f.Qr floats.
void flat_conv_image(float* out, bool accumulate, const float* bias, const float* in, int Cin, int Cout,
                     const float* wpk, const Flat& f, float* scratch) {
  const std::size_t HW = std::size_t(f.H) * f.W;
  for (int o0 = 0; o0 < Cout; o0 += GO) {
    flat_conv_tile(scratch, in, Cin, wpk + std::size_t(o0 / GO) * Cin * T * GO, f);
    for (int g = 0; g < GO && o0 + g < Cout; ++g) {
      const float* src = scratch + g * f.Qr;
      float* dst = out + (o0 + g) * HW;
      const float b = bias != nullptr ? bias[o0 + g] : 0.0f;
      for (int y = 0; y < f.H; ++y) {
        const float* s = src + std::size_t(y) * f.Wp;
        float* d = dst + std::size_t(y) * f.W;
        if (accumulate) {
#pragma omp simd
          for (int x = 0; x < f.W; ++x) d[x] += s[x];
        } else {
#pragma omp simd
          for (int x = 0; x < f.W; ++x) d[x] = s[x] + b;
        }
      }
    }
  }
}

// dw[o0+g][c][t] += sum_{n < images} sum_q dout[n][o0+g][q + Wp + 1] * in[n][c][q + tap(t)]
// for g < GW: dpad and ipad hold the padded planes of the images (dout shifted by one row and
// one column is dout at the output position, and zero in the garbage columns).
void flat_weight_grad(float* dw, int o0, int c, int images, const float* dpad, const float* ipad,
                      const Conv2dShape& s, const Flat& f) {
  const std::ptrdiff_t Wp = f.Wp;
  vf acc[GW][T] = {};
  for (int n = 0; n < images; ++n) {
    const float* d[GW];
    for (int g = 0; g < GW; ++g) d[g] = dpad + (std::size_t(n) * s.OC + std::min(o0 + g, s.OC - 1)) * f.plane + Wp + 1;
    const float* in = ipad + (std::size_t(n) * s.C + c) * f.plane;
    for (std::size_t q = 0; q < f.Qr; q += VL) {
      vf dv[GW];
      for (int g = 0; g < GW; ++g) dv[g] = vload(d[g] + q);
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          const vf x = vload(in + q + i * Wp + j);
          for (int g = 0; g < GW; ++g) acc[g][i * 3 + j] += dv[g] * x;
        }
    }
  }
  for (int g = 0; g < GW && o0 + g < s.OC; ++g)
    for (int t = 0; t < T; ++t) dw[((std::size_t(o0 + g) * s.C) + c) * T + t] += hsum(acc[g][t]);
}

}  // namespace

bool conv2d_direct_applies(const Conv2dShape& s) {
  return s.KH == 3 && s.KW == 3 && s.stride == 1 && s.pad == 1;
}

void conv2d_direct_forward(float* out, const float* inp, const float* weight, const float* bias,
                           const Conv2dShape& s) {
  const Flat f(s.H, s.W);
  const float* wpk =
      pack_weights(s.OC, s.C, [&](int o, int c, int t) { return weight[(std::size_t(o) * s.C + c) * T + t]; });
  const std::size_t in_img = std::size_t(s.C) * s.H * s.W, out_img = std::size_t(s.OC) * s.H * s.W;
#pragma omp parallel for schedule(static) if (s.N > 1)
  for (int n = 0; n < s.N; ++n) {
    float* pad = scratch(0, s.C * f.plane);
    pad_planes(pad, inp + n * in_img, s.C, f);
    flat_conv_image(out + n * out_img, false, bias, pad, s.C, s.OC, wpk, f, scratch(1, GO * f.Qr));
  }
}

void conv2d_direct_backward(float* dinp, float* dweight, const float* dout, const float* inp,
                            const float* weight, const Conv2dShape& s, bool accumulate_dinp) {
  const Flat f(s.H, s.W);
  const std::size_t in_img = std::size_t(s.C) * s.H * s.W, out_img = std::size_t(s.OC) * s.H * s.W;
  // dinp = correlation of padded dout with w'[c][o][t] = w[o][c][8 - t] (flipped, transposed).
  const float* wpk = nullptr;
  if (dinp != nullptr)
    wpk = pack_weights(s.C, s.OC, [&](int c, int o, int t) { return weight[(std::size_t(o) * s.C + c) * T + 8 - t]; });
  // Images go in chunks whose padded planes fit in ~3/4 of a 2 MiB L2 cache: each chunk is
  // padded (and its dinp computed) image-parallel, then every weight-gradient item reads the
  // whole chunk. The chunk size does not depend on the thread count (dweight's rounding would),
  // and is a multiple of 4 images when it can be, so 2 or 4 threads get equal shares.
  const std::size_t image_bytes = std::size_t(s.C + s.OC) * f.plane * sizeof(float);
  int chunk = int(std::clamp<std::size_t>((3u << 19) / image_bytes, 1, std::size_t(s.N)));
  if (chunk >= 4) chunk -= chunk % 4;
  float* dpad = scratch(0, std::size_t(chunk) * s.OC * f.plane);
  float* ipad = scratch(1, std::size_t(chunk) * s.C * f.plane);
  // Weight-gradient work items: (GW output channels, one input channel) entry sets; each is
  // summed by one thread over the chunks in order, so dweight does not depend on the threads.
  const int items = (s.OC + GW - 1) / GW * s.C;
  for (int n0 = 0; n0 < s.N; n0 += chunk) {
    const int n1 = std::min(s.N, n0 + chunk);
#pragma omp parallel for schedule(static) if (n1 - n0 > 1)
    for (int n = n0; n < n1; ++n) {
      float* dp = dpad + std::size_t(n - n0) * s.OC * f.plane;
      pad_planes(dp, dout + n * out_img, s.OC, f);
      pad_planes(ipad + std::size_t(n - n0) * s.C * f.plane, inp + n * in_img, s.C, f);
      if (dinp != nullptr)
        flat_conv_image(dinp + n * in_img, accumulate_dinp, nullptr, dp, s.OC, s.C, wpk, f, scratch(2, GO * f.Qr));
    }
#pragma omp parallel for schedule(static) if (items > 1)
    for (int item = 0; item < items; ++item)
      flat_weight_grad(dweight, (item / s.C) * GW, item % s.C, n1 - n0, dpad, ipad, s, f);
  }
}

}  // namespace sp::kernels::detail

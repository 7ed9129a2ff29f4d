// Direct 3x3 pad-1 convolution, stride 1 or 2, in "flat" padded layouts (see conv_direct.hpp).
//
// Stride 1. Each channel plane is the zero-padded image, H+2 rows of L = W+2 floats stored row
// after row, then zeros up to the plane size. Output pixel (y, x) has flat index q = y*L + x and
// its 3x3 window starts at padded index q, so
//   out[o][q] = sum_c sum_{i,j} w[o][c][i][j] * in[c][q + i*L + j]
// for every q in [0, OH*L): a 1-D correlation with nine fixed shifts. The columns x >= OW of
// every row are computed too and thrown away (6% extra work at 32 pixels wide, 20% at 8): the
// price of loops with no edge cases.
// Stride 2. The padded image is split into its four phases P[a][b][r][k] = pad[2r+a][2k+b]
// (rows of L = ceil((W+2)/2) floats); then out[y][x] = sum w[i][j] P[i%2][j%2][y + i/2][x + j/2]
// is again a correlation with nine fixed shifts (into four planes per channel).
// Input gradient. Stride 1: the correlation of the padded dout with the kernel flipped and
// transposed. Stride 2: each of the four phases (parities of y, x) of dinp is a correlation of
// dout (one zero row and column in front) with the 4, 2, 2 or 1 taps of that parity.
// Weight gradient: dw[o][c][t] = sum_q dz[o][q] * in[c][q + shift(t)], where dz is dout in the
// flat layout of the input's rows with zeros in the thrown-away columns.
//
// Vectors are GCC vector extensions of the widest width the target has (16 floats with
// AVX-512); a register tile is GO output channels x XV vectors of q, XV chosen per shape so the
// outputs are covered with the least rounding.
//
// Instruction sets. This file is compiled once per variant (kernels/CMakeLists.txt: with the
// build's baseline flags, and as conv_direct_v4.cpp with -march=x86-64-v4 when the baseline lacks
// AVX-512) into namespace SP_KERNEL_VARIANT; isa.cpp picks one at run time.
// Everything here is internal linkage or in that namespace, and nothing calls an out-of-line
// std:: template (a comdat copy compiled for AVX-512 could be the one the linker keeps for the
// whole program): tests/unit/isa.sh checks the objects define no weak symbols.
#include "kernels/conv_direct.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <utility>

#ifndef SP_KERNEL_VARIANT
#define SP_KERNEL_VARIANT baseline
#endif

namespace sp::kernels::detail::SP_KERNEL_VARIANT {

namespace {

#include "kernels/conv_direct_tiles.hpp"  // inside these namespaces: see that file

}  // namespace

void conv2d_direct_forward(float* out, const float* inp, const float* weight, const float* bias, const Conv2dShape& s) {
  const InputLayout f(s);
  const auto w_at = [&](int o, int c, int t) { return weight[(std::size_t(o) * s.C + c) * T + t]; };
  float* wpk = scratch(3, std::size_t((s.OC + GO - 1) / GO) * s.C * T * GO);
  if (s.stride == 1)
    pack_weights<Stride1Taps>(wpk, s.OC, s.C, w_at);
  else
    pack_weights<Stride2Taps>(wpk, s.OC, s.C, w_at);
  const Scatter m{f.OH, f.OW, f.L, 1, 0, 0, f.OH, f.OW};
  const std::size_t in_img = std::size_t(s.C) * s.H * s.W, out_img = std::size_t(s.OC) * f.OH * f.OW;
#pragma omp parallel for schedule(static) if (s.N > 1)
  for (int n = 0; n < s.N; ++n) {
    float* in = scratch(0, s.C * f.chan);
    to_input_layout(in, inp + n * in_img, s.C, f);
    const Planes planes{in, f.chan, s.C, f.L, std::ptrdiff_t(f.phase), f.Qr, f.xv};
    float* tile = scratch(1, GO * f.Qr);
    if (s.stride == 1)
      correlate_image<Stride1Taps>(out + n * out_img, false, bias, planes, s.OC, wpk, m, tile);
    else
      correlate_image<Stride2Taps>(out + n * out_img, false, bias, planes, s.OC, wpk, m, tile);
  }
}

void conv2d_direct_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight,
                            const Conv2dShape& s, bool accumulate_dinp) {
  const InputLayout f(s);
  const DoutLayout g(s);  // stride 2 only
  const std::size_t in_img = std::size_t(s.C) * s.H * s.W, out_img = std::size_t(s.OC) * f.OH * f.OW;
  const auto w_at = [&](int o, int c, int t) { return weight[(std::size_t(o) * s.C + c) * T + t]; };

  // Input-gradient weights. Stride 1: dinp = correlation of the padded dout with
  // w'[c][o][t] = w[o][c][8 - t] (flipped, transposed). Stride 2: one correlation per phase.
  const float* wpk[4] = {};
  if (dinp != nullptr) {
    float* w = scratch(3, 4 * std::size_t((s.C + GO - 1) / GO) * s.OC * T * GO);
    const auto w_t = [&](int c, int o, int t) { return w_at(o, c, t); };
    if (s.stride == 1) {
      wpk[0] = w;
      pack_weights<Stride1Taps>(w, s.C, s.OC, [&](int c, int o, int t) { return w_at(o, c, 8 - t); });
    } else {
      wpk[0] = w, w += pack_weights<DinpPhaseTaps<0, 0>>(w, s.C, s.OC, w_t);
      wpk[1] = w, w += pack_weights<DinpPhaseTaps<0, 1>>(w, s.C, s.OC, w_t);
      wpk[2] = w, w += pack_weights<DinpPhaseTaps<1, 0>>(w, s.C, s.OC, w_t);
      wpk[3] = w, pack_weights<DinpPhaseTaps<1, 1>>(w, s.C, s.OC, w_t);
    }
  }
  // dinp of one image from its padded dout planes dp.
  const auto image_dinp = [&](float* dx, const float* dp) {
    float* tile = scratch(2, GO * std::max(f.Qr, g.Qr));
    if (s.stride == 1) {
      const Planes planes{dp, f.chan, s.OC, f.L, 0, f.Qr, f.xv};
      return correlate_image<Stride1Taps>(dx, accumulate_dinp, nullptr, planes, s.C, wpk[0],
                                          Scatter{s.H, s.W, f.L, 1, 0, 0, s.H, s.W}, tile);
    }
    // The four phases write disjoint dinp elements.
    const Planes planes{dp, g.chan, s.OC, g.ld, 0, g.Qr, g.xv};
    const auto phase_to_dinp = [&](int a, int b) { return Scatter{g.R, g.ld, g.ld, 2, a - 1, b - 1, s.H, s.W}; };
    correlate_image<DinpPhaseTaps<0, 0>>(dx, accumulate_dinp, nullptr, planes, s.C, wpk[0], phase_to_dinp(0, 0), tile);
    correlate_image<DinpPhaseTaps<0, 1>>(dx, accumulate_dinp, nullptr, planes, s.C, wpk[1], phase_to_dinp(0, 1), tile);
    correlate_image<DinpPhaseTaps<1, 0>>(dx, accumulate_dinp, nullptr, planes, s.C, wpk[2], phase_to_dinp(1, 0), tile);
    correlate_image<DinpPhaseTaps<1, 1>>(dx, accumulate_dinp, nullptr, planes, s.C, wpk[3], phase_to_dinp(1, 1), tile);
  };
  // Images go in chunks whose planes fit in ~3/4 of a 2 MiB L2 cache: each chunk is laid out
  // (and its dinp computed) image-parallel, then every weight-gradient item reads the whole
  // chunk. The chunk size does not depend on the thread count (dweight's rounding would), and
  // is a multiple of 4 images when it can be, so 2 or 4 threads get equal shares.
  const std::size_t dout_chan = s.stride == 1 ? f.chan : g.chan;  // padded dout (dinp)
  const std::size_t dz_chan = s.stride == 1 ? 0 : f.Qr;           // stride 2: dout for dweight
  const std::size_t image_bytes = (s.C * f.chan + s.OC * (dout_chan + dz_chan)) * sizeof(float);
  int chunk = int(std::clamp<std::size_t>((3u << 19) / image_bytes, 1, std::size_t(s.N)));
  if (chunk >= 4) chunk -= chunk % 4;
  float* dpad = scratch(0, std::size_t(chunk) * s.OC * dout_chan);
  float* ipad = scratch(1, std::size_t(chunk) * s.C * f.chan);
  float* dz = s.stride == 1 ? nullptr : scratch(4, std::size_t(chunk) * s.OC * dz_chan);
  // Weight-gradient work items: (gw output channels, one input channel) entry sets; each is
  // summed by one thread over the chunks in order, so dweight does not depend on the threads.
  const int gw = s.stride == 1 ? GW1 : GW, items = (s.OC + gw - 1) / gw * s.C;
  for (int n0 = 0; n0 < s.N; n0 += chunk) {
    const int n1 = std::min(s.N, n0 + chunk);
#pragma omp parallel for schedule(static) if (n1 - n0 > 1)
    for (int n = n0; n < n1; ++n) {
      float* dp = dpad + std::size_t(n - n0) * s.OC * dout_chan;
      if (s.stride == 1) {
        to_flat(dp, dout + n * out_img, s.OC, f.OH, f.OW, f.L, 1, 1, dout_chan);
      } else {
        to_flat(dp, dout + n * out_img, s.OC, f.OH, f.OW, g.ld, 1, 1, dout_chan);
        to_flat(dz + std::size_t(n - n0) * s.OC * dz_chan, dout + n * out_img, s.OC, f.OH, f.OW, f.L, 0, 0, dz_chan);
      }
      to_input_layout(ipad + std::size_t(n - n0) * s.C * f.chan, inp + n * in_img, s.C, f);
      if (dinp != nullptr) image_dinp(dinp + n * in_img, dp);
    }
    const int images = n1 - n0;
    if (s.stride == 1) {
      // dz is the padded dout seen from one row and one column in: dout at the output position,
      // and the zero borders in the thrown-away columns.
      const auto dz1 = [&](int n, int o) { return dpad + (std::size_t(n) * s.OC + o) * dout_chan + f.L + 1; };
#pragma omp parallel for schedule(static) if (items > 1)
      for (int item = 0; item < items; ++item)
        weight_grad_item<Stride1Taps, GW1>(dweight, (item / s.C) * gw, item % s.C, images, dz1, ipad, s, f);
    } else {
      const auto dz2 = [&](int n, int o) { return dz + (std::size_t(n) * s.OC + o) * dz_chan; };
#pragma omp parallel for schedule(static) if (items > 1)
      for (int item = 0; item < items; ++item)
        weight_grad_item<Stride2Taps, GW>(dweight, (item / s.C) * gw, item % s.C, images, dz2, ipad, s, f);
    }
  }
}

}  // namespace sp::kernels::detail::SP_KERNEL_VARIANT
